package heapledger.gradle;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import org.gradle.api.DefaultTask;
import org.gradle.api.GradleException;
import org.gradle.api.file.FileCollection;
import org.gradle.api.tasks.CacheableTask;
import org.gradle.api.tasks.Classpath;
import org.gradle.api.tasks.Input;
import org.gradle.api.tasks.InputFile;
import org.gradle.api.tasks.Internal;
import org.gradle.api.tasks.Optional;
import org.gradle.api.tasks.OutputDirectory;
import org.gradle.api.tasks.PathSensitive;
import org.gradle.api.tasks.PathSensitivity;
import org.gradle.api.tasks.SkipWhenEmpty;
import org.gradle.api.tasks.TaskAction;

/**
 * Runs {@code heapledger rewrite --pass count} on classes (class directories or a jar) into a
 * directory of its own: OUTPUT (a class directory, or a jar of the input's name), OUTPUT.table.tsv
 * and OUTPUT.log, what heapledger said. It never writes into its inputs, so compiling stays
 * incremental and the compiled classes stay what the compiler made.
 *
 * <p>Everything the output depends on is an input: the classes, every option that changes the
 * rewritten bytes or the outcome, and the binary itself (a new heapledger may rewrite
 * differently). heapledger writes the same bytes for the same input and options whatever
 * --jobs is, so the task can be cached and its output shared between machines; --jobs and
 * --verbose change neither output nor outcome and are not inputs.
 */
@CacheableTask
public class HeapledgerRewrite extends DefaultTask {
    private HeapledgerExtension settings;
    private FileCollection classes;
    private Callable<File> destinationDir;
    private Callable<String> outputName;

    void configure(HeapledgerExtension settings, FileCollection classes, Callable<File> destinationDir, Callable<String> outputName) {
        this.settings = settings;
        this.classes = classes;
        this.destinationDir = destinationDir;
        this.outputName = outputName;
        onlyIf(t -> settings.isEnabled());
    }

    /** The classes to rewrite, in class path order: the first class of a name wins. */
    @Classpath
    @SkipWhenEmpty
    public FileCollection getClasses() { return classes; }

    @OutputDirectory
    public File getDestinationDir() { return call(destinationDir); }

    /** The output's name in the destination directory: "classes", or the input jar's name. */
    @Input
    public String getOutputName() { return call(outputName); }

    /** The rewritten classes (a directory, or a jar when the input is one). */
    @Internal
    public File getOutput() { return new File(getDestinationDir(), getOutputName()); }

    @Input
    public List<String> getAccounts() { return settings.getAccounts(); }

    @Optional
    @InputFile
    @PathSensitive(PathSensitivity.NONE)
    public File getAccountsFile() { return settings.getAccountsFile(); }

    @Optional
    @Input
    public String getLiveness() { return settings.getLiveness(); }

    /** As text, so 30 and 30.0 are one input, as they are one option. */
    @Optional
    @Input
    public String getSnapshotInterval() {
        Number n = settings.getSnapshotInterval();
        return n == null ? null : Double.toString(n.doubleValue());
    }

    @Input
    public boolean isSnapshotGc() { return settings.isSnapshotGc(); }

    @Input
    public Map<String, String> getBudgets() {
        Map<String, String> m = new TreeMap<>();
        for (Map.Entry<String, Object> e : settings.getBudgets().entrySet()) {
            m.put(e.getKey(), String.valueOf(e.getValue()));
        }
        return m;
    }

    @Optional
    @Input
    public String getBudgetAction() { return settings.getBudgetAction(); }

    @Optional
    @Input
    public String getJmx() { return settings.getJmx(); }

    @Optional
    @Input
    public String getCounters() { return settings.getCounters(); }

    @Input
    public boolean isCountIncrements() { return settings.isCountIncrements(); }

    @Optional
    @InputFile
    @PathSensitive(PathSensitivity.NONE)
    public File getProfile() { return settings.getProfile(); }

    @Optional
    @Input
    public String getContext() { return settings.getContext(); }

    @Input
    public boolean isEmbedRuntime() { return settings.isEmbedRuntime(); }

    /** An input although it changes no byte: with it a failed class fails the task, so it must rerun. */
    @Input
    public boolean isStrict() { return settings.isStrict(); }

    @Internal
    public boolean isVerbose() { return settings.isVerbose(); }

    @Internal
    public Integer getJobs() { return settings.getJobs(); }

    @InputFile
    @PathSensitive(PathSensitivity.NONE)
    public File getBinary() { return settings.getBinary(); }

    /** The runtime copied into the output with --embed-runtime; nothing otherwise. */
    @Optional
    @InputFile
    @PathSensitive(PathSensitivity.NONE)
    public File getEmbeddedRuntime() { return settings.isEmbedRuntime() ? settings.getRuntimeJar() : null; }

    @TaskAction
    public void rewrite() throws IOException, InterruptedException {
        File dest = getDestinationDir();
        File out = getOutput();
        // heapledger writes into an empty or new directory only; the task owns dest, and what a
        // previous run left there is the old output.
        getProject().delete(dest);
        Files.createDirectories(dest.toPath());

        List<String> cmd = new ArrayList<>();
        cmd.add(getBinary().getAbsolutePath());
        cmd.add("rewrite");
        cmd.add("--pass");
        cmd.add("count");
        cmd.addAll(options());
        int inputs = 0;
        for (File f : getClasses()) {
            // A source set lists a class directory for each JVM language whether it compiled
            // anything or not.
            if (f.exists()) {
                cmd.add(f.getAbsolutePath());
                inputs++;
            }
        }
        if (inputs == 0) {
            return;
        }
        cmd.add("-o");
        cmd.add(out.getAbsolutePath());

        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (settings.isEmbedRuntime()) {
            pb.environment().put("HEAPLEDGER_RUNTIME", getEmbeddedRuntime().getAbsolutePath());
        }
        getLogger().info("running {}", String.join(" ", cmd));
        Process p = pb.start();
        List<String> said = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             Writer log = Files.newBufferedWriter(new File(dest, getOutputName() + ".log").toPath(), StandardCharsets.UTF_8)) {
            for (String line; (line = r.readLine()) != null; ) {
                said.add(line);
                log.write(line);
                log.write('\n');
                say(line);
            }
        } finally {
            // The build was cancelled or the pipe broke: the rewrite must not outlive the task.
            if (p.isAlive()) p.destroy();
        }
        int status = p.waitFor();
        if (status != 0) {
            throw new GradleException("heapledger rewrite of " + getClasses().getAsPath() + " failed (exit status " + status + "):\n"
                    + String.join("\n", said));
        }
    }

    /** The command-line options the settings stand for, in the order `rewrite --help` lists them. */
    List<String> options() {
        List<String> o = new ArrayList<>();
        if (getJobs() != null) {
            o.add("--jobs");
            o.add(getJobs().toString());
        }
        if (isStrict()) o.add("--strict");
        if (isVerbose()) o.add("--verbose");
        if (!getAccounts().isEmpty()) {
            o.add("--accounts");
            o.add(String.join(",", getAccounts()));
        }
        if (getAccountsFile() != null) {
            o.add("--accounts-file");
            o.add(getAccountsFile().getAbsolutePath());
        }
        if (isEmbedRuntime()) o.add("--embed-runtime");
        if (getLiveness() != null) {
            o.add("--liveness");
            o.add(getLiveness());
        }
        if (getSnapshotInterval() != null) {
            o.add("--snapshot-interval");
            o.add(getSnapshotInterval());
        }
        for (Map.Entry<String, String> e : getBudgets().entrySet()) {
            o.add("--budget");
            o.add(e.getKey() + "=" + e.getValue());
        }
        if (getBudgetAction() != null) {
            o.add("--budget-action");
            o.add(getBudgetAction());
        }
        if (isSnapshotGc()) o.add("--snapshot-gc");
        if (getCounters() != null) {
            o.add("--counters");
            o.add(getCounters());
        }
        if (isCountIncrements()) o.add("--count-increments");
        if (getProfile() != null) {
            o.add("--profile");
            o.add(getProfile().getAbsolutePath());
        }
        if (getJmx() != null) {
            o.add("--jmx");
            o.add(getJmx());
        }
        if (getContext() != null) {
            o.add("--context");
            o.add(getContext());
        }
        return o;
    }

    /**
     * Logs a line of heapledger's: what went wrong (failed classes, warnings) as a warning, the
     * summary of classes rewritten and methods skipped where the build shows it, the rest (where
     * the table went, how to run) at info, since the plugin does it for the build.
     */
    private void say(String line) {
        if (line.startsWith("failed") || line.startsWith("warning") || line.startsWith("heapledger:")) {
            getLogger().warn(line);
        } else if (line.contains(": pass count: ")) {
            getLogger().lifecycle(line);
        } else {
            getLogger().info(line);
        }
    }

    private static <T> T call(Callable<T> c) {
        try {
            return c.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new GradleException(e.getMessage(), e);
        }
    }
}
