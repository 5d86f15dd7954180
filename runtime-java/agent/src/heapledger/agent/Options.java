package heapledger.agent;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The agent's options: the text after "=" in -javaagent:heapledger-agent.jar=OPTIONS, or the
 * options of an attach. Comma-separated KEY=VALUE, values percent-encoded (UTF-8) so that paths
 * and account patterns may contain commas. heapledger writes them (cli/agent.go); docs/agent.md
 * lists them.
 */
final class Options {
    /** The heapledger binary that serves transforms. */
    String bin;
    /** Arguments of `heapledger serve` (the pass options), in order. */
    final List<String> serveArgs = new ArrayList<String>();
    /** How long a class waits for its answer before the service is given up. */
    long timeoutMillis = 20000;
    boolean verbose;
    /** Print class counts and transform latencies at exit. */
    boolean stats;
    /** Attach and detach: the file the agent reports to, read by the heapledger command. */
    String status;
    /** Attach: where snapshots go (sets heapledger.snapshot.dir before the runtime starts). */
    String snapshotDir;
    boolean detach;
    /** Rewrite the JDK's own classes too, by retransformation (docs/agent.md, "JDK classes"). */
    boolean jdk;
    /** Hook java.lang.Object.<init> (docs/agent.md, "The Object.<init> hook"). */
    boolean objectInit;

    static Options parse(String text) {
        Options o = new Options();
        if (text == null || text.isEmpty()) return o;
        for (String item : text.split(",")) {
            if (item.isEmpty()) continue;
            int eq = item.indexOf('=');
            String key = eq < 0 ? item : item.substring(0, eq);
            String value = eq < 0 ? "" : decode(item.substring(eq + 1));
            if (key.equals("bin")) o.bin = value;
            else if (key.equals("arg")) o.serveArgs.add(value);
            else if (key.equals("timeout")) o.timeoutMillis = Long.parseLong(value);
            else if (key.equals("verbose")) o.verbose = !value.equals("false");
            else if (key.equals("stats")) o.stats = !value.equals("false");
            else if (key.equals("status")) o.status = value;
            else if (key.equals("snapshot.dir")) o.snapshotDir = value;
            else if (key.equals("detach")) o.detach = !value.equals("false");
            else if (key.equals("jdk")) o.jdk = !value.equals("false");
            else if (key.equals("object.init")) o.objectInit = !value.equals("false");
            else throw new IllegalArgumentException("unknown agent option '" + key + "'");
        }
        if (o.timeoutMillis <= 0) throw new IllegalArgumentException("timeout must be positive milliseconds");
        if (prop("heapledger.agent.stats")) o.stats = true;
        if (prop("heapledger.agent.verbose")) o.verbose = true;
        return o;
    }

    private static boolean prop(String name) {
        String v = System.getProperty(name);
        return v != null && !v.equals("false");
    }

    /** Percent-decoding of UTF-8 bytes; '+' is kept as it is (it appears in paths). */
    static String decode(String s) {
        if (s.indexOf('%') < 0) return s;
        ByteArrayOutputStream b = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= s.length()) throw new IllegalArgumentException("bad percent-encoding in '" + s + "'");
                b.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                b.write(c); // heapledger encodes every byte outside printable ASCII
            }
        }
        return new String(b.toByteArray(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
