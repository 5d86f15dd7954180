package heapledger.verify;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Links every class of a jar on the running JVM and prints one line per class:
 * {@code STATUS<TAB>class<TAB>message}, STATUS being OK, VerifyError, ClassFormatError,
 * NoClassDefFoundError (a dependency is missing) or Other. Lines are sorted by class name so two
 * runs (before and after a rewrite) can be compared line by line.
 *
 * <p>Each class is linked in a fresh class loader that defines the jar's classes on demand. One
 * loader for the whole jar would let a class that fails hide the classes that extend or use it
 * (they would fail on the cached error, or pass because a sibling loaded first), so the outcome
 * of a class would depend on the order of the others; a fresh loader makes each line a function
 * of that class and its dependencies only, which is what "links before implies links after"
 * needs. Classes are loaded without initialization (static initializers may have side effects)
 * and linked by {@code getDeclaredMethods()}, which HotSpot links (and so verifies) first.
 * Custom loaders are verified by default (BytecodeVerificationRemote).
 *
 * <p>Usage: {@code Verify [--cp CLASSPATH] [--threads N] JAR}. Classes of a multi-release jar
 * are taken from the highest META-INF/versions/N/ not above the running Java version.
 */
public final class Verify {
    private Verify() {}

    public static void main(String[] args) throws Exception {
        String cp = "";
        int threads = Runtime.getRuntime().availableProcessors();
        String jar = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--cp") && i + 1 < args.length) {
                cp = args[++i];
            } else if (args[i].equals("--threads") && i + 1 < args.length) {
                threads = Integer.parseInt(args[++i]);
            } else if (args[i].startsWith("-") || jar != null) {
                usage("unexpected argument " + args[i]);
            } else {
                jar = args[i];
            }
        }
        if (jar == null) {
            usage("no JAR given");
        }
        Map<String, byte[]> classes;
        try {
            classes = readClasses(jar);
        } catch (IOException e) {
            System.err.println("verify: " + jar + ": " + e);
            System.exit(2);
            return;
        }
        ClassLoader deps = new URLClassLoader(toURLs(cp), ClassLoader.getSystemClassLoader().getParent());
        final String[] names = classes.keySet().toArray(new String[0]);
        final String[] lines = new String[names.length];
        final Map<String, byte[]> all = classes;
        final ClassLoader parent = deps;
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
        for (int i = 0; i < names.length; i++) {
            final int k = i;
            pool.execute(new Runnable() {
                public void run() {
                    lines[k] = check(names[k], all, parent);
                }
            });
        }
        pool.shutdown();
        pool.awaitTermination(Long.MAX_VALUE, TimeUnit.DAYS);
        Map<String, Integer> counts = new TreeMap<String, Integer>();
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        for (String line : lines) {
            out.println(line);
            String status = line.substring(0, line.indexOf('\t'));
            Integer n = counts.get(status);
            counts.put(status, n == null ? 1 : n + 1);
        }
        out.flush();
        System.err.println("verify: " + jar + ": " + names.length + " classes on Java "
                + System.getProperty("java.version") + ": " + counts);
    }

    private static void usage(String why) {
        System.err.println("verify: " + why + "\nusage: Verify [--cp CLASSPATH] [--threads N] JAR");
        System.exit(2);
    }

    static String check(String name, Map<String, byte[]> classes, ClassLoader deps) {
        try {
            Class<?> c = Class.forName(name, false, new JarLoader(classes, deps));
            c.getDeclaredMethods();
            return "OK\t" + name + "\t";
        } catch (Throwable t) {
            String status;
            if (t instanceof VerifyError) {
                status = "VerifyError";
            } else if (t instanceof ClassFormatError) {
                status = "ClassFormatError";
            } else if (t instanceof NoClassDefFoundError || t instanceof ClassNotFoundException) {
                status = "NoClassDefFoundError";
            } else {
                status = "Other";
            }
            return status + "\t" + name + "\t" + oneLine(t.toString());
        }
    }

    /** VerifyError messages span lines (bytecode dumps); the output keeps one line per class. */
    static String oneLine(String s) {
        return s.replace("\r", "").replace('\n', ' ').replace('\t', ' ');
    }

    static URL[] toURLs(String cp) throws MalformedURLException {
        List<URL> urls = new ArrayList<URL>();
        for (String p : cp.split(File.pathSeparator)) {
            if (!p.isEmpty()) {
                urls.add(new File(p).toURI().toURL());
            }
        }
        return urls.toArray(new URL[0]);
    }

    /** Reads the jar's classes by binary name, with multi-release versions resolved. */
    static Map<String, byte[]> readClasses(String jar) throws IOException {
        int feature = javaFeature();
        Map<String, byte[]> classes = new TreeMap<String, byte[]>();
        Map<String, Integer> version = new HashMap<String, Integer>();
        ZipFile zf = new ZipFile(jar);
        try {
            boolean multiRelease = false;
            ZipEntry mfe = zf.getEntry("META-INF/MANIFEST.MF");
            if (mfe != null) {
                InputStream in = zf.getInputStream(mfe);
                try {
                    Attributes main = new Manifest(in).getMainAttributes();
                    multiRelease = "true".equalsIgnoreCase(main.getValue("Multi-Release"));
                } finally {
                    in.close();
                }
            }
            for (Enumeration<? extends ZipEntry> en = zf.entries(); en.hasMoreElements();) {
                ZipEntry e = en.nextElement();
                String n = e.getName();
                if (!n.endsWith(".class") || n.endsWith("module-info.class") || n.endsWith("package-info.class")) {
                    continue;
                }
                int v = 0;
                if (n.startsWith("META-INF/")) {
                    if (!multiRelease || !n.startsWith("META-INF/versions/")) {
                        continue;
                    }
                    String rest = n.substring("META-INF/versions/".length());
                    int slash = rest.indexOf('/');
                    if (slash <= 0) {
                        continue;
                    }
                    try {
                        v = Integer.parseInt(rest.substring(0, slash));
                    } catch (RuntimeException ex) {
                        continue;
                    }
                    if (v > feature) {
                        continue; // not for this Java
                    }
                    n = rest.substring(slash + 1);
                }
                String name = n.substring(0, n.length() - ".class".length()).replace('/', '.');
                Integer have = version.get(name);
                if (have != null && have >= v) {
                    continue;
                }
                version.put(name, v);
                classes.put(name, readAll(zf.getInputStream(e)));
            }
        } finally {
            zf.close();
        }
        return classes;
    }

    static int javaFeature() {
        String v = System.getProperty("java.specification.version");
        if (v.startsWith("1.")) {
            v = v.substring(2);
        }
        return Integer.parseInt(v);
    }

    static byte[] readAll(InputStream in) throws IOException {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0;) {
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        } finally {
            in.close();
        }
    }

    /** Defines the jar's classes itself (child first) and delegates everything else. */
    static final class JarLoader extends ClassLoader {
        private final Map<String, byte[]> classes;

        JarLoader(Map<String, byte[]> classes, ClassLoader parent) {
            super(parent);
            this.classes = classes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    byte[] b = name.startsWith("java.") ? null : classes.get(name);
                    if (b != null) {
                        c = defineClass(name, b, 0, b.length);
                    } else {
                        c = getParent().loadClass(name);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
