package heapledger.maven;

import java.io.File;
import java.io.IOException;
import java.util.Properties;

import org.apache.maven.execution.MavenSession;
import org.apache.maven.model.Plugin;
import org.apache.maven.model.PluginExecution;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Parameter;
import org.codehaus.plexus.util.xml.Xpp3Dom;

/**
 * Rewrites a class directory of the project into target/heapledger/NAME and makes the
 * rewritten directory the project's for the rest of the build, until the restore goal gives
 * the original back before packaging. The compiler's output is never written to: a failed
 * build leaves target/classes as the compiler made it (JaCoCo's offline instrumentation
 * rewrites it in place, and a build that fails between its instrument and restore goals leaves
 * instrumented classes there for the next build to compile against, test and package).
 *
 * <p>Surefire takes its class directories from ${project.build.outputDirectory} and
 * ${project.build.testOutputDirectory} when it runs, so it runs the tests on the rewritten
 * classes with no configuration of its own; the runtime reaches its class path through
 * maven.test.additionalClasspath and the snapshot directory its JVM through argLine, the
 * properties Surefire reads those from.
 */
abstract class AbstractRewriteClassesMojo extends AbstractHeapledgerMojo {
    @Parameter(defaultValue = "${session}", readonly = true, required = true)
    MavenSession session;

    /** The context key that keeps the original directory, and the output's name in target/heapledger. */
    abstract String originalKey();

    abstract String name();

    abstract String current();

    abstract void use(String dir);

    @Override
    public void execute() throws MojoExecutionException, MojoFailureException {
        if (!enabled) {
            getLog().info("heapledger: disabled");
            return;
        }
        // Run twice in one build (bound twice, or a forked lifecycle), the goal rewrites the
        // original classes again, never its own output.
        Object kept = project.getContextValue(originalKey());
        File original = new File(kept != null ? (String) kept : current());
        if (!original.isDirectory()) {
            getLog().info("heapledger: no classes in " + original);
            return;
        }
        File dest = new File(project.getBuild().getDirectory(), "heapledger");
        rewrite(original, dest, name());
        project.setContextValue(originalKey(), original.getPath());
        use(new File(dest, name()).getPath());
        getLog().info("heapledger: the build goes on with " + new File(dest, name()) + " in place of " + original);
        setUpTests();
    }

    /** Once per project: the runtime and the snapshot directory for Surefire. */
    private void setUpTests() throws MojoExecutionException {
        if (project.getContextValue("heapledger.tests") != null) {
            return;
        }
        project.setContextValue("heapledger.tests", Boolean.TRUE);
        Properties props = project.getProperties();
        Properties user = session.getUserProperties();
        if (!embedRuntime) {
            String rt = runtimeJar().getAbsolutePath();
            String cp = props.getProperty("maven.test.additionalClasspath");
            props.setProperty("maven.test.additionalClasspath", cp == null || cp.isEmpty() ? rt : cp + "," + rt);
            if (user.containsKey("maven.test.additionalClasspath")) {
                getLog().warn("heapledger: -Dmaven.test.additionalClasspath replaces the class path entry that holds the runtime; add "
                        + rt + " to it");
            }
        }
        File dir = new File(snapshotDir, "test");
        try {
            // Only this build's snapshots: a report of the directory is a report of this test run.
            delete(dir.toPath());
        } catch (IOException e) {
            throw new MojoExecutionException("heapledger: cannot empty " + dir + ": " + e.getMessage(), e);
        }
        String args = quote("-Dheapledger.snapshot.dir=" + dir.getAbsolutePath());
        if (snapshotFormat != null) {
            args += " " + quote("-Dheapledger.snapshot.format=" + snapshotFormat);
        }
        String old = props.getProperty("argLine");
        props.setProperty("argLine", old == null || old.isEmpty() ? args : args + " " + old);
        if (user.containsKey("argLine")) {
            getLog().warn("heapledger: -DargLine replaces the JVM options that send snapshots to " + dir + "; add " + args + " to it");
        }
        surefireConfiguration(dir);
    }

    /**
     * Warns when the pom sets Surefire's argLine or additionalClasspathElements itself: the
     * properties this goal sets are then not read, unless argLine takes them in with @{argLine}.
     */
    private void surefireConfiguration(File dir) {
        for (Plugin p : project.getBuildPlugins()) {
            if (!"maven-surefire-plugin".equals(p.getArtifactId())) {
                continue;
            }
            check(p.getConfiguration(), dir);
            for (PluginExecution e : p.getExecutions()) {
                check(e.getConfiguration(), dir);
            }
        }
    }

    private void check(Object configuration, File dir) {
        if (!(configuration instanceof Xpp3Dom)) {
            return;
        }
        Xpp3Dom c = (Xpp3Dom) configuration;
        Xpp3Dom argLine = c.getChild("argLine");
        if (argLine != null && argLine.getValue() != null && !argLine.getValue().contains("@{argLine}")
                && !argLine.getValue().contains("${argLine}")) {
            getLog().warn("heapledger: Surefire's <argLine> does not take in @{argLine}, so the tests' snapshots go to their "
                    + "working directory, not " + dir + ": write <argLine>@{argLine} " + argLine.getValue() + "</argLine>");
        }
        if (!embedRuntime && c.getChild("additionalClasspathElements") != null) {
            getLog().warn("heapledger: Surefire's <additionalClasspathElements> replaces the entry that holds the heapledger runtime; "
                    + "list heapledger-runtime.jar in it, or set <embedRuntime>true</embedRuntime>");
        }
    }

    /** Surefire splits argLine at spaces outside quotes. */
    private static String quote(String arg) {
        return arg.indexOf(' ') < 0 ? arg : "\"" + arg + "\"";
    }
}
