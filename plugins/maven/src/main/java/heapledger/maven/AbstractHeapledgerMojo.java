package heapledger.maven;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.maven.plugin.AbstractMojo;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.project.MavenProject;

/**
 * What the goals share: the options of {@code heapledger rewrite --pass count}, named as in the
 * Gradle plugin's {@code heapledger { }} block (docs/build-plugins.md), and running the binary.
 * An option left unset is not passed, so the binary's own default applies.
 */
abstract class AbstractHeapledgerMojo extends AbstractMojo {
    /** Where the project's original output directories are kept while the rewritten ones stand in. */
    static final String ORIGINAL_CLASSES = "heapledger.originalOutputDirectory";
    static final String ORIGINAL_TEST_CLASSES = "heapledger.originalTestOutputDirectory";

    @Parameter(defaultValue = "${project}", readonly = true, required = true)
    MavenProject project;

    /** False leaves the build as it would be without the plugin. */
    @Parameter(property = "heapledger.enabled", defaultValue = "true")
    boolean enabled;

    /** --accounts: package patterns, each an account. */
    @Parameter(property = "heapledger.accounts")
    List<String> accounts;

    /** --accounts-file: named accounts, one per line ('NAME = pattern, pattern'). */
    @Parameter(property = "heapledger.accountsFile")
    File accountsFile;

    /** --liveness: off, all or sample:N. */
    @Parameter(property = "heapledger.liveness")
    String liveness;

    /** --snapshot-interval: seconds between periodic snapshots. */
    @Parameter(property = "heapledger.snapshotInterval")
    Double snapshotInterval;

    /** --snapshot-gc: a full GC before each periodic or on-demand snapshot. */
    @Parameter(property = "heapledger.snapshotGc", defaultValue = "false")
    boolean snapshotGc;

    /**
     * --budget for each: ACCOUNT=BYTES. A list, not a map as in Gradle: an account pattern
     * ('com.acme.*') is no XML element name.
     */
    @Parameter
    List<String> budgets;

    /** --budget-action: log, dump, throw or dump,throw. */
    @Parameter(property = "heapledger.budgetAction")
    String budgetAction;

    /** --counters: sites, paths or edges (docs/instrumentation.md, "Path counters" and "Profiles"). */
    @Parameter(property = "heapledger.counters")
    String counters;

    /** --count-increments: snapshots say how many counter increments ran. */
    @Parameter(property = "heapledger.countIncrements", defaultValue = "false")
    boolean countIncrements;

    /** --profile: with counters paths, plan them from a snapshot of a run with counters edges (docs/instrumentation.md, "Profiles"). */
    @Parameter(property = "heapledger.profile")
    File profile;

    /** --jmx: auto, on or off. */
    @Parameter(property = "heapledger.jmx")
    String jmx;

    /** --context: none, cct, or cct:depth=N,nodes=N,fold (calling-context trees). */
    @Parameter(property = "heapledger.context")
    String context;

    /** --embed-runtime: the runtime is copied into the output, and not added to the test class path. */
    @Parameter(property = "heapledger.embedRuntime", defaultValue = "false")
    boolean embedRuntime;

    /** --strict: a class that cannot be rewritten fails the build (it is reported either way). */
    @Parameter(property = "heapledger.strict", defaultValue = "false")
    boolean strict;

    /** --verbose: every warning and skip reason, not the first twenty. */
    @Parameter(property = "heapledger.verbose", defaultValue = "false")
    boolean verbose;

    /** --jobs: classes rewritten at once (the output is the same whatever it is). */
    @Parameter(property = "heapledger.jobs")
    Integer jobs;

    /** Where tests write snapshots, in a directory per goal that runs them (test). */
    @Parameter(property = "heapledger.snapshotDir", defaultValue = "${project.build.directory}/heapledger/snapshots")
    File snapshotDir;

    /** The runtime's heapledger.snapshot.format for the tests: text, json or both. */
    @Parameter(property = "heapledger.snapshotFormat")
    String snapshotFormat;

    /** The heapledger binary; by default the one on PATH. */
    @Parameter(property = "heapledger.binary")
    File binary;

    /** The runtime rewritten code calls; by default heapledger-runtime.jar beside the binary. */
    @Parameter(property = "heapledger.runtimeJar")
    File runtimeJar;

    /** The command-line options the parameters stand for, in the order `rewrite --help` lists them. */
    List<String> options() {
        List<String> o = new ArrayList<>();
        if (jobs != null) {
            o.add("--jobs");
            o.add(jobs.toString());
        }
        if (strict) o.add("--strict");
        if (verbose) o.add("--verbose");
        if (accounts != null && !accounts.isEmpty()) {
            o.add("--accounts");
            o.add(String.join(",", accounts));
        }
        if (accountsFile != null) {
            o.add("--accounts-file");
            o.add(accountsFile.getAbsolutePath());
        }
        if (embedRuntime) o.add("--embed-runtime");
        if (liveness != null) {
            o.add("--liveness");
            o.add(liveness);
        }
        if (snapshotInterval != null) {
            o.add("--snapshot-interval");
            o.add(snapshotInterval.toString());
        }
        if (budgets != null) {
            for (String b : budgets) {
                o.add("--budget");
                o.add(b);
            }
        }
        if (budgetAction != null) {
            o.add("--budget-action");
            o.add(budgetAction);
        }
        if (snapshotGc) o.add("--snapshot-gc");
        if (counters != null) {
            o.add("--counters");
            o.add(counters);
        }
        if (countIncrements) o.add("--count-increments");
        if (profile != null) {
            o.add("--profile");
            o.add(profile.getAbsolutePath());
        }
        if (jmx != null) {
            o.add("--jmx");
            o.add(jmx);
        }
        if (context != null) {
            o.add("--context");
            o.add(context);
        }
        return o;
    }

    File binary() throws MojoExecutionException {
        if (binary != null) {
            if (!binary.isFile()) {
                throw new MojoExecutionException("heapledger binary " + binary + " does not exist");
            }
            return binary;
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                File f = new File(dir.isEmpty() ? "." : dir, "heapledger");
                if (f.isFile() && f.canExecute()) return f;
            }
        }
        throw new MojoExecutionException("cannot find the heapledger binary on PATH; set <binary> in the plugin's "
                + "configuration, or -Dheapledger.binary=/path/to/bin/heapledger");
    }

    /** The runtime: as set, else beside the binary (resolving links: a binary on PATH may link into a bin/). */
    File runtimeJar() throws MojoExecutionException {
        if (runtimeJar != null) {
            if (!runtimeJar.isFile()) {
                throw new MojoExecutionException("heapledger runtime " + runtimeJar + " does not exist");
            }
            return runtimeJar;
        }
        File bin = binary();
        File f;
        try {
            f = new File(bin.getCanonicalFile().getParentFile(), "heapledger-runtime.jar");
        } catch (IOException e) {
            throw new MojoExecutionException("cannot resolve " + bin + ": " + e.getMessage(), e);
        }
        if (!f.isFile()) {
            throw new MojoExecutionException("cannot find heapledger-runtime.jar beside " + bin + "; set <runtimeJar>");
        }
        return f;
    }

    /**
     * Rewrites input (a class directory or a jar) into dest/name, with dest/name.table.tsv and
     * dest/name.log (what heapledger said). It is skipped when dest/name.stamp says the same
     * input, options and binary made the output there: Maven has no up-to-date check of its own,
     * and a rewritten directory that changes at every build would make the test compilation
     * see a changed class path every time.
     *
     * @return false when it was up to date
     */
    boolean rewrite(File input, File dest, String name) throws MojoExecutionException, MojoFailureException {
        File out = new File(dest, name);
        File stampFile = new File(dest, name + ".stamp");
        List<String> cmd = new ArrayList<>();
        File bin = binary();
        cmd.add(bin.getAbsolutePath());
        cmd.add("rewrite");
        cmd.add("--pass");
        cmd.add("count");
        cmd.addAll(options());
        cmd.add(input.getAbsolutePath());
        cmd.add("-o");
        cmd.add(out.getAbsolutePath());
        String stamp;
        try {
            stamp = stamp(cmd, bin, input);
            if (out.exists() && stampFile.isFile()
                    && new String(Files.readAllBytes(stampFile.toPath()), StandardCharsets.UTF_8).equals(stamp)) {
                getLog().info("heapledger: " + out + " is up to date");
                return false;
            }
            // heapledger writes into a new or empty directory only; what is there is the old output.
            delete(out.toPath());
            Files.deleteIfExists(stampFile.toPath());
            Files.createDirectories(dest.toPath());
        } catch (IOException e) {
            throw new MojoExecutionException("heapledger: " + e.getMessage(), e);
        }

        getLog().debug("running " + String.join(" ", cmd));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (embedRuntime) {
            pb.environment().put("HEAPLEDGER_RUNTIME", runtimeJar().getAbsolutePath());
        }
        List<String> said = new ArrayList<>();
        int status;
        try {
            Process p = pb.start();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                 Writer log = Files.newBufferedWriter(new File(dest, name + ".log").toPath(), StandardCharsets.UTF_8)) {
                for (String line; (line = r.readLine()) != null; ) {
                    said.add(line);
                    log.write(line);
                    log.write('\n');
                    say(line);
                }
            } finally {
                if (p.isAlive()) p.destroy();
            }
            status = p.waitFor();
        } catch (IOException e) {
            throw new MojoExecutionException("heapledger: cannot run " + bin + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MojoExecutionException("heapledger: interrupted", e);
        }
        String message = "heapledger rewrite of " + input + " failed (exit status " + status + "):\n" + String.join("\n", said);
        if (status == 2 && strict) {
            // --strict: some class could not be rewritten; the build's fault, not the plugin's.
            throw new MojoFailureException(message);
        } else if (status != 0) {
            throw new MojoExecutionException(message);
        }
        try {
            Files.write(stampFile.toPath(), stamp.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new MojoExecutionException("heapledger: " + e.getMessage(), e);
        }
        return true;
    }

    /** What failed or warns, as a warning; the summary at info; the rest (where the table went) at debug. */
    private void say(String line) {
        if (line.startsWith("failed") || line.startsWith("warning") || line.startsWith("heapledger:")) {
            getLog().warn(line);
        } else if (line.contains(": pass count: ")) {
            getLog().info(line);
        } else {
            getLog().debug(line);
        }
    }

    /**
     * A digest of everything the output depends on: the command line, the binary's bytes, the
     * embedded runtime's, and every file of the input with its path relative to the input.
     */
    private String stamp(List<String> cmd, File bin, File input) throws IOException, MojoExecutionException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        for (String c : cmd) {
            md.update(c.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
        }
        digestFile(md, bin.toPath());
        if (embedRuntime) digestFile(md, runtimeJar().toPath());
        if (accountsFile != null) digestFile(md, accountsFile.toPath());
        if (profile != null) digestFile(md, profile.toPath());
        Path root = input.toPath();
        List<Path> files;
        if (Files.isDirectory(root)) {
            try (Stream<Path> s = Files.walk(root)) {
                files = s.filter(Files::isRegularFile).sorted().collect(Collectors.toList());
            }
        } else {
            files = Collections.singletonList(root);
        }
        for (Path f : files) {
            md.update(root.relativize(f).toString().getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            digestFile(md, f);
        }
        StringBuilder sb = new StringBuilder();
        for (byte b : md.digest()) sb.append(String.format("%02x", b));
        return sb.toString();
    }

    private static void digestFile(MessageDigest md, Path f) throws IOException {
        byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(f)) {
            for (int n; (n = in.read(buf)) > 0; ) md.update(buf, 0, n);
        }
        md.update((byte) 0);
    }

    static void delete(Path p) throws IOException {
        if (!Files.exists(p)) return;
        if (Files.isDirectory(p)) {
            try (Stream<Path> s = Files.walk(p)) {
                List<Path> all = s.sorted(Collections.reverseOrder()).collect(Collectors.toList());
                for (Path q : all) Files.delete(q);
            }
        } else {
            Files.delete(p);
        }
    }
}
