package heapledger.rt;

/**
 * The runtime's JMX face, registered as {@code heapledger:type=Ledger} in the platform MBean
 * server (docs/runtime.md, "JMX"). A standard MBean: JConsole, VisualVM, jmxterm or any JMX
 * client can call it with nothing of ours on its class path, since every type is a
 * java.lang one.
 */
public interface LedgerControlMBean {
    /** The ObjectName the runtime registers under. */
    String NAME = "heapledger:type=Ledger";

    /**
     * Writes a snapshot now (reason "demand", after a full GC when heapledger.snapshot.gc is
     * set) and returns the file written; an error names the directory and the cause.
     */
    String snapshot();

    /**
     * Writes an HPROF heap dump of live objects to path and returns the file written. A
     * relative path is resolved against the snapshot directory, an empty one names a file
     * there; an existing file is never overwritten. The dump holds the names of the accounts
     * and sites its tracking references carry (Snapshots.heapDumpTable).
     */
    String heapDump(String path);

    /** off, all or sample:N. */
    String getLiveness();

    /** Where snapshots (and heap dumps with relative paths) go, as an absolute path. */
    String getSnapshotDirectory();

    /** text, json or both. */
    String getSnapshotFormat();

    /** Seconds between periodic snapshots; 0 when only at exit and on demand. */
    double getSnapshotInterval();

    /** Snapshots written so far by this process, whatever asked for them. */
    long getSnapshotsWritten();

    /** The last snapshot file written, or "" before the first. */
    String getLastSnapshot();

    /** Internal failures the runtime swallowed rather than throw into the program. */
    long getDropped();

    /** The first of them, or "" when none. */
    String getFirstDrop();
}
