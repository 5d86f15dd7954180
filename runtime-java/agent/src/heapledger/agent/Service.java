package heapledger.agent;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The `heapledger serve` child process and the framed protocol to it (rewrite/transformsvc).
 * Any number of class-loading threads may wait at once; one reader thread matches answers to
 * them by request ID.
 *
 * <p>Failure is final: when the service does not answer in time, exits, or the pipe breaks, the
 * class at hand and every later class load unmodified, and one warning says why. Restarting
 * would make a broken service cost a timeout per class; instrumented classes keep counting.
 */
final class Service {
    static final int UNCHANGED = 0, CHANGED = 1, FAILED = 2, HELLO = 3;
    /** Set in a status byte answered from the service's cache of transformed classes. */
    static final int CACHED = 0x80;

    /** One request waiting for its answer. */
    static final class Pending {
        boolean done;
        int status;
        boolean cached;
        byte[] bytes;
        String table;
        String messages;
    }

    private final Process process;
    private final DataOutputStream out;
    private final DataInputStream in;
    private final long timeoutMillis;
    private final ConcurrentHashMap<Integer, Pending> pending = new ConcurrentHashMap<Integer, Pending>();
    private final AtomicInteger ids = new AtomicInteger();
    private final Pending hello = new Pending();
    private volatile boolean dead;
    private volatile boolean closing;
    private boolean warned;
    private volatile Thread reader;
    final long pid;

    private Service(Process p, long timeoutMillis) {
        this.process = p;
        this.timeoutMillis = timeoutMillis;
        this.out = new DataOutputStream(new BufferedOutputStream(p.getOutputStream(), 1 << 16));
        this.in = new DataInputStream(new BufferedInputStream(p.getInputStream(), 1 << 16));
        this.pid = pidOf(p);
    }

    /**
     * Starts the service and waits for its hello. Returns the account lines of the table, or
     * throws with the reason the service is unusable (the agent then installs nothing).
     */
    static Service start(Options o, List<String> extraArgs) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<String>();
        cmd.add(o.bin);
        cmd.add("serve");
        cmd.addAll(o.serveArgs);
        cmd.addAll(extraArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        // The service's own diagnostics (a crash) go where the program's go.
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Service s = new Service(pb.start(), o.timeoutMillis);
        s.startReader();
        synchronized (s.hello) {
            long deadline = System.nanoTime() + o.timeoutMillis * 1000000L;
            while (!s.hello.done && !s.dead) {
                long left = (deadline - System.nanoTime()) / 1000000L;
                if (left <= 0) break;
                s.hello.wait(left);
            }
        }
        if (!s.hello.done) {
            s.process.destroyForcibly();
            throw new IOException(o.bin + " serve " + (s.dead ? "exited before it was ready" : "gave no sign of life within " + o.timeoutMillis + " ms")
                    + " (see its messages above)");
        }
        return s;
    }

    String accountLines() {
        return hello.table;
    }

    /** The hello's messages: the cache the agent may read itself, if any (LocalCache.offered). */
    String helloMessages() {
        return hello.messages;
    }

    boolean usable() {
        return !dead && !closing;
    }

    private void startReader() {
        Thread t = new Thread("heapledger-transform-service") {
            @Override
            public void run() {
                Agent.ownThread();
                readLoop();
            }
        };
        t.setDaemon(true);
        reader = t;
        t.start();
    }

    private void readLoop() {
        try {
            while (true) {
                int len = in.readInt();
                int id = in.readInt();
                int status = in.readUnsignedByte();
                boolean cached = (status & CACHED) != 0;
                status &= ~CACHED;
                byte[] bytes = block();
                String table = new String(block(), StandardCharsets.UTF_8);
                String messages = new String(block(), StandardCharsets.UTF_8);
                if (len != 4 + 1 + 4 + (bytes == null ? 0 : bytes.length) + 4 + table.getBytes(StandardCharsets.UTF_8).length
                        + 4 + messages.getBytes(StandardCharsets.UTF_8).length) {
                    throw new IOException("response " + id + " does not match its frame length " + len);
                }
                Pending p = id == 0 && status == HELLO ? hello : pending.remove(id);
                if (p == null) continue; // its class gave up waiting
                synchronized (p) {
                    p.status = status;
                    p.cached = cached;
                    p.bytes = bytes;
                    p.table = table;
                    p.messages = messages;
                    p.done = true;
                    p.notifyAll();
                }
            }
        } catch (Throwable e) {
            if (closing) return;
            String why = e instanceof EOFException ? "exited" : "broke (" + e + ")";
            fail("the transform service" + (pid > 0 ? " (pid " + pid + ")" : "") + " " + why + exitStatus(), null);
        }
    }

    private byte[] block() throws IOException {
        int n = in.readInt();
        if (n < 0 || n > (256 << 20)) throw new IOException("block of " + n + " bytes");
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    private String exitStatus() {
        try {
            return ", exit status " + process.exitValue();
        } catch (IllegalThreadStateException stillRunning) {
            return "";
        }
    }

    /**
     * Sends one class and waits for the answer; with a profile (edge profile lines, --adapt),
     * asks for it to be re-instrumented from that profile. Returns null when the service is unusable or
     * gave up on the class (failure already reported).
     */
    Pending transform(String name, String loader, String profile, byte[] classFile) {
        if (!usable()) return null;
        int id = ids.incrementAndGet();
        if (id == 0) id = ids.incrementAndGet(); // 0 is the hello
        Pending p = new Pending();
        pending.put(id, p);
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        byte[] l = loader.getBytes(StandardCharsets.UTF_8);
        byte[] prof = profile == null ? new byte[0] : profile.getBytes(StandardCharsets.UTF_8);
        if (n.length > 0xFFFF || l.length > 0xFFFF || !send(id, n, l, prof, classFile, name)) {
            pending.remove(id);
            return null;
        }
        try {
            synchronized (p) {
                long deadline = System.nanoTime() + timeoutMillis * 1000000L;
                while (!p.done && !dead) {
                    long left = (deadline - System.nanoTime()) / 1000000L;
                    if (left <= 0) break;
                    p.wait(left);
                }
            }
        } catch (InterruptedException e) {
            // The program interrupted its own class-loading thread: load this class unmodified
            // and keep the interrupt for the program.
            pending.remove(id);
            Thread.currentThread().interrupt();
            return null;
        }
        if (p.done) return p;
        pending.remove(id);
        if (!dead) fail("the transform service did not answer within " + timeoutMillis + " ms", name);
        return null;
    }

    /**
     * Sends a control request (rewrite/transformsvc: an empty class name, what it asks in the
     * profile field) without waiting for its answer, which the reader drops.
     */
    void tell(String what) {
        if (!usable()) return;
        int id = ids.incrementAndGet();
        if (id == 0) id = ids.incrementAndGet();
        send(id, new byte[0], new byte[0], what.getBytes(StandardCharsets.UTF_8), new byte[0], "");
    }

    /** Writes one request frame; false (and the service given up) when it cannot. */
    private boolean send(int id, byte[] n, byte[] l, byte[] prof, byte[] classFile, String name) {
        try {
            synchronized (out) {
                out.writeInt(4 + 2 + n.length + 2 + l.length + 4 + prof.length + classFile.length);
                out.writeInt(id);
                out.writeShort(n.length);
                out.write(n);
                out.writeShort(l.length);
                out.write(l);
                out.writeInt(prof.length);
                out.write(prof);
                out.write(classFile);
                out.flush();
            }
            return true;
        } catch (IOException e) {
            if (!closing) fail("cannot send a class to the transform service (" + e.getMessage() + ")" + exitStatus(), name);
            return false;
        }
    }

    /** Gives the service up for good: one warning, every waiting class loads unmodified. */
    void fail(String why, String className) {
        boolean first;
        synchronized (this) {
            first = !warned;
            warned = true;
            dead = true;
        }
        for (Pending p : pending.values()) {
            synchronized (p) {
                p.notifyAll();
            }
        }
        synchronized (hello) {
            hello.notifyAll();
        }
        if (first) {
            Agent.warn(why + (className == null ? "" : " while loading " + className.replace('/', '.'))
                    + "; classes load unmodified from now on (classes already instrumented keep counting)");
        }
        process.destroyForcibly(); // SIGKILL: a hung or stopped service must not outlive the JVM
    }

    /**
     * At the JVM's exit: ends the service's input and waits, at most millis, for it to close
     * its output. HotSpot's exit waits up to 300 ms for every thread in native code, and the
     * reader, blocked reading the service's pipe, is one until that pipe ends.
     */
    void end(long millis) {
        close();
        Thread t = reader;
        if (t == null || t == Thread.currentThread()) return;
        try {
            t.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Ends the service on purpose (detach): it sees the end of its input and exits. */
    void close() {
        closing = true;
        try {
            synchronized (out) {
                out.close();
            }
        } catch (IOException ignored) {
            // already gone: nothing left to end
        }
    }

    private static long pidOf(Process p) {
        try {
            // Java 9+; the agent targets Java 8, so reflectively.
            return (Long) Process.class.getMethod("pid").invoke(p);
        } catch (Throwable e) {
            return -1;
        }
    }
}
