package heapledger.gradle;

import java.io.File;
import java.net.URISyntaxException;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import org.gradle.api.Plugin;
import org.gradle.api.Project;
import org.gradle.api.Task;
import org.gradle.api.artifacts.Configuration;
import org.gradle.api.initialization.dsl.ScriptHandler;
import org.gradle.api.file.ConfigurableFileCollection;
import org.gradle.api.file.FileCollection;
import org.gradle.api.plugins.ApplicationPlugin;
import org.gradle.api.plugins.BasePlugin;
import org.gradle.api.plugins.JavaPlugin;
import org.gradle.api.plugins.JavaPluginConvention;
import org.gradle.api.tasks.JavaExec;
import org.gradle.api.tasks.SourceSet;
import org.gradle.api.tasks.bundling.Jar;
import org.gradle.api.tasks.testing.Test;

/**
 * The Gradle plugin {@code heapledger}: with the java plugin, every source set gets a task
 * heapledgerRewrite&lt;SourceSet&gt; that rewrites its compiled classes into
 * build/heapledger/&lt;sourceSet&gt;/classes; every Test task and the application plugin's run
 * task then run on the rewritten classes, with the runtime on their class path, and write their
 * snapshots into build/heapledger/snapshots/&lt;task&gt;. heapledgerJar rewrites the jar task's
 * jar into build/heapledger/jar/ (part of assemble with {@code rewriteJar = true}).
 *
 * <p>The compiled classes are never touched: the rewritten ones live beside them and replace
 * them on class paths only, so compilation stays incremental, the jar task still packages what
 * the compiler made, and a build with {@code enabled = false} is the build without the plugin.
 */
public class HeapledgerPlugin implements Plugin<Project> {
    static final String GROUP = "heapledger";

    @Override
    public void apply(Project project) {
        HeapledgerExtension ext = project.getExtensions().create("heapledger", HeapledgerExtension.class, project,
                (Callable<File>) () -> pluginJar(project));
        project.getPlugins().withType(JavaPlugin.class, p -> java(project, ext));
    }

    private static void java(Project project, HeapledgerExtension ext) {
        Map<String, HeapledgerRewrite> rewrites = new LinkedHashMap<>();
        Map<String, SourceSet> sets = new LinkedHashMap<>();
        project.getConvention().getPlugin(JavaPluginConvention.class).getSourceSets().all(ss -> {
            String name = "heapledgerRewrite" + capitalize(ss.getName());
            HeapledgerRewrite t = project.getTasks().create(name, HeapledgerRewrite.class);
            t.setGroup(GROUP);
            t.setDescription("Rewrites the " + ss.getName() + " classes for memory accounting into build/heapledger/" + ss.getName() + "/.");
            t.configure(ext, ss.getOutput().getClassesDirs(),
                    () -> new File(project.getBuildDir(), "heapledger/" + ss.getName()), () -> "classes");
            rewrites.put(ss.getName(), t);
            sets.put(ss.getName(), ss);
        });

        Jar jar = (Jar) project.getTasks().getByName(JavaPlugin.JAR_TASK_NAME);
        HeapledgerRewrite rewriteJar = project.getTasks().create("heapledgerJar", HeapledgerRewrite.class);
        rewriteJar.setGroup(GROUP);
        rewriteJar.setDescription("Rewrites the jar task's jar for memory accounting into build/heapledger/jar/.");
        rewriteJar.configure(ext, project.files((Callable<File>) jar::getArchivePath).builtBy(jar),
                () -> new File(project.getBuildDir(), "heapledger/jar"), jar::getArchiveName);

        // Class paths are swapped once the build script has run, so a class path the script
        // sets (a custom Test task's) is swapped too, and `enabled = false` leaves them alone.
        project.afterEvaluate(p -> {
            if (!ext.isEnabled()) {
                return;
            }
            project.getTasks().withType(Test.class, test -> {
                test.setClasspath(rewritten(project, ext, test.getClasspath(), rewrites, sets));
                File dir = new File(ext.getSnapshotDir(), test.getName());
                runtimeSettings(ext, dir, test::systemProperty);
                // The snapshots are the test run's output: restored with it from the cache, and
                // only this run's, so a report of the directory is a report of this run.
                test.getOutputs().dir(dir).withPropertyName("heapledgerSnapshots");
                test.doFirst(t -> project.delete(dir));
            });
            project.getPlugins().withType(ApplicationPlugin.class, a -> {
                JavaExec run = (JavaExec) project.getTasks().getByName(ApplicationPlugin.TASK_RUN_NAME);
                run.setClasspath(rewritten(project, ext, run.getClasspath(), rewrites, sets));
                runtimeSettings(ext, new File(ext.getSnapshotDir(), run.getName()), run::systemProperty);
            });
            if (ext.isRewriteJar()) {
                project.getTasks().getByName(BasePlugin.ASSEMBLE_TASK_NAME).dependsOn(rewriteJar);
            }
        });
    }

    private interface Property {
        void set(String name, Object value);
    }

    private static void runtimeSettings(HeapledgerExtension ext, File snapshots, Property p) {
        p.set("heapledger.snapshot.dir", snapshots.getAbsolutePath());
        if (ext.getSnapshotFormat() != null) {
            p.set("heapledger.snapshot.format", ext.getSnapshotFormat());
        }
    }

    /**
     * The class path with each source set's class directories replaced by its rewritten classes
     * (in the place of the first of them, so the order is kept), and the runtime at the end. It
     * is worked out when the class path is used, and is built by the rewrite tasks of the source
     * sets it holds besides what builds the original.
     */
    private static FileCollection rewritten(Project project, HeapledgerExtension ext, FileCollection original,
                                            Map<String, HeapledgerRewrite> rewrites, Map<String, SourceSet> sets) {
        ConfigurableFileCollection cp = project.files((Callable<List<File>>) () -> {
            List<File> files = new ArrayList<>();
            List<String> done = new ArrayList<>();
            for (File f : original) {
                String owner = owner(f, sets);
                if (owner == null) {
                    files.add(f);
                } else if (!done.contains(owner)) {
                    done.add(owner);
                    files.add(rewrites.get(owner).getOutput());
                }
            }
            if (!ext.isEmbedRuntime()) {
                files.add(ext.getRuntimeJar());
            }
            return files;
        });
        cp.builtBy(original, (Callable<List<Task>>) () -> {
            List<Task> tasks = new ArrayList<>();
            for (File f : original) {
                String owner = owner(f, sets);
                if (owner != null && !tasks.contains(rewrites.get(owner))) {
                    tasks.add(rewrites.get(owner));
                }
            }
            return tasks;
        });
        return cp;
    }

    /** The source set whose class directory f is, or null. */
    private static String owner(File f, Map<String, SourceSet> sets) {
        for (Map.Entry<String, SourceSet> e : sets.entrySet()) {
            if (e.getValue().getOutput().getClassesDirs().contains(f)) {
                return e.getKey();
            }
        }
        return null;
    }

    private static String capitalize(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    /**
     * The jar the build script put on its class path for this plugin (through files(...) or a
     * flat directory): the heapledger binary is looked for beside it. Gradle loads the plugin
     * from a copy in its cache, so the class's own location is the last resort. A plugin applied
     * to a subproject may have come from an ancestor's build script.
     */
    private static File pluginJar(Project project) {
        for (Project p = project; p != null; p = p.getParent()) {
            Configuration c = p.getBuildscript().getConfigurations().findByName(ScriptHandler.CLASSPATH_CONFIGURATION);
            if (c == null) {
                continue;
            }
            for (File f : c.getFiles()) {
                if (f.getName().startsWith("heapledger-gradle-plugin") && f.getName().endsWith(".jar")) {
                    return f;
                }
            }
        }
        CodeSource cs = HeapledgerPlugin.class.getProtectionDomain().getCodeSource();
        if (cs == null || cs.getLocation() == null || !"file".equals(cs.getLocation().getProtocol())) {
            return null;
        }
        try {
            return new File(cs.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }
}
