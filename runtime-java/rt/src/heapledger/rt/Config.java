package heapledger.rt;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URL;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Map;

/**
 * Settings chosen at rewrite time: "config KEY VALUE" lines at the top of the tables the
 * rewriter put on the class path (docs/formats.md). A system property or environment variable
 * of the same setting overrides them at launch.
 */
final class Config {
    private static Map<String, String> values;

    static synchronized String get(String key, String def) {
        if (values == null) values = load();
        String v = values.get(key);
        return v == null ? def : v;
    }

    static synchronized boolean hasPrefix(String prefix) {
        if (values == null) values = load();
        for (String k : values.keySet()) {
            if (k.startsWith(prefix)) return true;
        }
        return false;
    }

    private static Map<String, String> load() {
        Map<String, String> m = new HashMap<String, String>();
        try {
            ClassLoader cl = ClassLoader.getSystemClassLoader();
            Enumeration<URL> e = cl == null ? null : cl.getResources(Snapshots.TABLE_RESOURCE);
            while (e != null && e.hasMoreElements()) {
                URL u = e.nextElement();
                InputStream in = u.openStream();
                try {
                    BufferedReader r = new BufferedReader(new InputStreamReader(in, "UTF-8"));
                    String line;
                    while ((line = r.readLine()) != null) {
                        if (line.startsWith("#")) continue;
                        if (!line.startsWith("config\t")) break; // config lines come first
                        String[] f = line.split("\t", 3);
                        if (f.length == 3) {
                            String old = m.put(f[1], f[2]);
                            if (old != null && !old.equals(f[2])) {
                                Snapshots.warn("tables on the class path disagree on " + f[1] + " (" + old + ", " + f[2] + "); using " + f[2]);
                            }
                        }
                    }
                } finally {
                    in.close();
                }
            }
        } catch (Throwable t) {
            Snapshots.warn("cannot read rewrite-time settings: " + t);
        }
        return m;
    }
}
