package heapledger.gradle;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

import org.gradle.api.GradleException;
import org.gradle.api.Project;

/**
 * The {@code heapledger { ... }} block. Every option of {@code heapledger rewrite --pass count}
 * has a name here (docs/build-plugins.md lists them with their flags); an option left unset is
 * not passed, so the binary's own default applies. The options are the project's: every rewrite
 * task of the project uses them, so all source sets share one list of accounts (account IDs are
 * positions in that list, and classes rewritten apart run together only with the same list).
 */
public class HeapledgerExtension {
    /** The binary's name beside the plugin jar and on PATH. */
    static final String BINARY = "heapledger";
    /** The runtime's name beside the binary, where `make build` puts it. */
    static final String RUNTIME = "heapledger-runtime.jar";

    private final Project project;
    /** Finds the plugin's jar (null when it has none), when the binary is first looked for. */
    private final Callable<File> pluginJar;

    private boolean enabled = true;
    private List<String> accounts = new ArrayList<>();
    private Object accountsFile;
    private String liveness;
    private Number snapshotInterval;
    private boolean snapshotGc;
    private Map<String, Object> budgets = new TreeMap<>();
    private String budgetAction;
    private String jmx;
    private String counters;
    private boolean countIncrements;
    private Object profile;
    private String context;
    private boolean embedRuntime;
    private boolean strict;
    private boolean verbose;
    private Integer jobs;
    private Object snapshotDir;
    private String snapshotFormat;
    private Object binary;
    private Object runtimeJar;
    private boolean rewriteJar;

    public HeapledgerExtension(Project project, Callable<File> pluginJar) {
        this.project = project;
        this.pluginJar = pluginJar;
    }

    /** False leaves the build as it would be without the plugin: nothing rewritten, no class path changed. */
    public boolean isEnabled() { return enabled; }
    public void setEnabled(boolean enabled) { this.enabled = enabled; }

    /** --accounts: package patterns, each an account ('com.acme.*', 'com.acme.web', '*'). */
    public List<String> getAccounts() { return accounts; }
    public void setAccounts(List<String> accounts) { this.accounts = new ArrayList<>(accounts); }
    public void accounts(String... patterns) {
        for (String p : patterns) accounts.add(p);
    }

    /** --accounts-file: named accounts, one per line ('NAME = pattern, pattern'). */
    public File getAccountsFile() { return accountsFile == null ? null : project.file(accountsFile); }
    public void setAccountsFile(Object accountsFile) { this.accountsFile = accountsFile; }

    /** --liveness: off, all or sample:N. */
    public String getLiveness() { return liveness; }
    public void setLiveness(String liveness) { this.liveness = liveness; }

    /** --snapshot-interval: seconds between periodic snapshots. */
    public Number getSnapshotInterval() { return snapshotInterval; }
    public void setSnapshotInterval(Number snapshotInterval) { this.snapshotInterval = snapshotInterval; }

    /** --snapshot-gc: a full GC before each periodic or on-demand snapshot. */
    public boolean isSnapshotGc() { return snapshotGc; }
    public void setSnapshotGc(boolean snapshotGc) { this.snapshotGc = snapshotGc; }

    /** --budget ACCOUNT=BYTES for each entry: ['com.acme.*': '512M']. */
    public Map<String, Object> getBudgets() { return budgets; }
    public void setBudgets(Map<String, ?> budgets) { this.budgets = new TreeMap<>(budgets); }

    /** --budget-action: log, dump, throw or dump,throw. */
    public String getBudgetAction() { return budgetAction; }
    public void setBudgetAction(String budgetAction) { this.budgetAction = budgetAction; }

    /** --counters: sites, paths or edges (docs/instrumentation.md, "Path counters" and "Profiles"). */
    public String getCounters() { return counters; }
    public void setCounters(String counters) { this.counters = counters; }

    /** --count-increments: snapshots say how many counter increments ran. */
    public boolean isCountIncrements() { return countIncrements; }
    public void setCountIncrements(boolean countIncrements) { this.countIncrements = countIncrements; }

    /** --profile: with counters 'paths', plan them from a snapshot of a run with counters 'edges' (docs/instrumentation.md, "Profiles"). */
    public File getProfile() { return profile == null ? null : project.file(profile); }
    public void setProfile(Object profile) { this.profile = profile; }

    /** --jmx: auto, on or off. */
    public String getJmx() { return jmx; }
    public void setJmx(String jmx) { this.jmx = jmx; }

    /** --context: none, cct, or cct:depth=N,nodes=N,fold (calling-context trees). */
    public String getContext() { return context; }
    public void setContext(String context) { this.context = context; }

    /** --embed-runtime: the runtime is copied into the output, and not added to class paths. */
    public boolean isEmbedRuntime() { return embedRuntime; }
    public void setEmbedRuntime(boolean embedRuntime) { this.embedRuntime = embedRuntime; }

    /** --strict: a class that cannot be rewritten fails the build (it is reported either way). */
    public boolean isStrict() { return strict; }
    public void setStrict(boolean strict) { this.strict = strict; }

    /** --verbose: every warning and skip reason, not the first twenty. */
    public boolean isVerbose() { return verbose; }
    public void setVerbose(boolean verbose) { this.verbose = verbose; }

    /** --jobs: classes rewritten at once (the output is the same whatever it is). */
    public Integer getJobs() { return jobs; }
    public void setJobs(Integer jobs) { this.jobs = jobs; }

    /** Where tasks that run rewritten code write snapshots, each in a directory named after the task. */
    public File getSnapshotDir() {
        return snapshotDir == null ? new File(project.getBuildDir(), "heapledger/snapshots") : project.file(snapshotDir);
    }
    public void setSnapshotDir(Object snapshotDir) { this.snapshotDir = snapshotDir; }

    /** The runtime's heapledger.snapshot.format for those tasks: text, json or both. */
    public String getSnapshotFormat() { return snapshotFormat; }
    public void setSnapshotFormat(String snapshotFormat) { this.snapshotFormat = snapshotFormat; }

    /** Also rewrite the jar task's jar, into build/heapledger/jar/, as part of assemble. */
    public boolean isRewriteJar() { return rewriteJar; }
    public void setRewriteJar(boolean rewriteJar) { this.rewriteJar = rewriteJar; }

    public void setBinary(Object binary) { this.binary = binary; }
    public void setRuntimeJar(Object runtimeJar) { this.runtimeJar = runtimeJar; }

    /**
     * The heapledger binary: as set, else beside the plugin jar (bin/ of a heapledger build holds
     * both), else on PATH. Asked for only when a task runs, so a build that never rewrites needs
     * no binary.
     */
    public File getBinary() {
        if (binary != null) {
            File f = project.file(binary);
            if (!f.isFile()) {
                throw new GradleException("heapledger.binary: " + f + " does not exist");
            }
            return f;
        }
        List<String> tried = new ArrayList<>();
        File jar;
        try {
            jar = pluginJar.call();
        } catch (Exception e) {
            throw new GradleException("heapledger: cannot find the plugin's jar: " + e.getMessage(), e);
        }
        if (jar != null) {
            File f = new File(jar.getParentFile(), BINARY);
            if (f.isFile()) return f;
            tried.add(f.toString());
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                File f = new File(dir.isEmpty() ? "." : dir, BINARY);
                if (f.isFile() && f.canExecute()) return f;
            }
            tried.add("PATH");
        }
        throw new GradleException("cannot find the heapledger binary (looked in " + String.join(", ", tried)
                + "); set heapledger { binary = file('/path/to/bin/heapledger') }");
    }

    /**
     * The runtime jar rewritten code calls: as set, else beside the binary (resolving links, so a
     * binary on PATH that links into a heapledger bin/ finds that bin/'s runtime).
     */
    public File getRuntimeJar() {
        if (runtimeJar != null) {
            File f = project.file(runtimeJar);
            if (!f.isFile()) {
                throw new GradleException("heapledger.runtimeJar: " + f + " does not exist");
            }
            return f;
        }
        File bin = getBinary();
        File f;
        try {
            f = new File(bin.getCanonicalFile().getParentFile(), RUNTIME);
        } catch (IOException e) {
            throw new GradleException("heapledger: cannot resolve " + bin + ": " + e.getMessage(), e);
        }
        if (!f.isFile()) {
            throw new GradleException("cannot find " + RUNTIME + " beside " + bin
                    + "; set heapledger { runtimeJar = file('/path/to/heapledger-runtime.jar') }");
        }
        return f;
    }
}
