package heapledger.maven;

import org.apache.maven.model.Plugin;
import org.apache.maven.model.PluginExecution;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;

/**
 * Rewrites the compiled classes (target/classes) into target/heapledger/classes, which stands
 * in for them until the restore goal: the tests compile against and run on the rewritten
 * classes, with the heapledger runtime on their class path.
 */
@Mojo(name = "rewrite", defaultPhase = LifecyclePhase.PROCESS_CLASSES, threadSafe = true)
public class RewriteMojo extends AbstractRewriteClassesMojo {
    @Override
    String originalKey() { return ORIGINAL_CLASSES; }

    @Override
    String name() { return "classes"; }

    @Override
    String current() { return project.getBuild().getOutputDirectory(); }

    @Override
    void use(String dir) { project.getBuild().setOutputDirectory(dir); }

    @Override
    public void execute() throws MojoExecutionException, MojoFailureException {
        super.execute();
        if (enabled && !restoreBound()) {
            getLog().warn("heapledger: the restore goal is not bound, so packaging takes the rewritten classes: "
                    + "add <goal>restore</goal> to the plugin's executions (docs/build-plugins.md)");
        }
    }

    private boolean restoreBound() {
        for (Plugin p : project.getBuildPlugins()) {
            if (!"heapledger-maven-plugin".equals(p.getArtifactId())) {
                continue;
            }
            for (PluginExecution e : p.getExecutions()) {
                if (e.getGoals().contains("restore")) {
                    return true;
                }
            }
        }
        return false;
    }
}
