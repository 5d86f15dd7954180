package heapledger.rt;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

/**
 * The shallow-size model (documented in docs/runtime.md). Arrays: header (mark word + class
 * pointer + length, aligned to the element size) plus length times element size, rounded up to
 * the object alignment. Objects: the JVM's own field layout read through Unsafe (the end of the
 * last field, rounded up) where that is silent, else HotSpot's field layout rule applied to the
 * declared fields.
 *
 * <p>From JDK 24 on, the first call of a memory-access method of sun.misc.Unsafe prints a
 * warning on the program's stderr (JEP 471, 498), so there the runtime does not touch Unsafe:
 * the reference size comes from the property HotSpot sets when it compresses references, the
 * header from the options the JVM was started with, and field offsets from the layout rule.
 */
final class Sizes {
    static final int ALIGN = 8;
    static final int REF;        // bytes per reference in arrays and fields
    static final int ARRAY_BASE; // offset of element 0 of an Object[] (header incl. length)
    static final int OBJECT_HEADER;
    /** Where the layout came from, for the snapshot's size_model line. */
    static final String SOURCE;
    private static final Object UNSAFE;
    private static final java.lang.reflect.Method FIELD_OFFSET;

    static {
        Object unsafe = null;
        java.lang.reflect.Method fieldOffset = null;
        int ref = 4, base = 16, header = 12;
        String source = "defaults";
        if (feature() < 24) {
            try {
                Class<?> c = Class.forName("sun.misc.Unsafe");
                Field f = c.getDeclaredField("theUnsafe");
                f.setAccessible(true);
                unsafe = f.get(null);
                ref = (Integer) c.getMethod("arrayIndexScale", Class.class).invoke(unsafe, Object[].class);
                base = (Integer) c.getMethod("arrayBaseOffset", Class.class).invoke(unsafe, Object[].class);
                header = base - 4; // the array length field follows the object header
                fieldOffset = c.getMethod("objectFieldOffset", Field.class);
                source = "unsafe";
            } catch (Throwable t) {
                unsafe = null; // keep the documented defaults (compressed oops and class pointers)
                ref = 4;
                base = 16;
                header = 12;
            }
        } else {
            try {
                int[] h = fromOptions();
                ref = h[0];
                header = h[1];
                base = header + 4;
                source = "options";
            } catch (Throwable t) {
                // the documented defaults
            }
        }
        REF = ref;
        ARRAY_BASE = base;
        OBJECT_HEADER = header;
        UNSAFE = unsafe;
        FIELD_OFFSET = fieldOffset;
        SOURCE = source;
    }

    /** The Java feature release: 8 for "1.8", 25 for "25". */
    static int feature() {
        String v = System.getProperty("java.specification.version", "1.8");
        if (v.startsWith("1.")) v = v.substring(2);
        int dot = v.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? v : v.substring(0, dot));
        } catch (NumberFormatException e) {
            return 8;
        }
    }

    /**
     * {reference size, object header} of a HotSpot VM without Unsafe. HotSpot sets
     * java.vm.compressedOopsMode exactly when it compresses references. Compact object headers
     * (8 bytes, JDK 24's -XX:+UseCompactObjectHeaders) and uncompressed class pointers (16) are
     * read from the options the JVM was started with: its command line and the environment
     * variables the launcher and the VM read, the last setting winning as in the VM. An option
     * from an @argfile or -XX:VMOptionsFile is not seen.
     */
    private static int[] fromOptions() {
        String vm = System.getProperty("java.vm.name", "");
        boolean hotspot = vm.contains("HotSpot") || vm.contains("OpenJDK");
        int ref = !hotspot || System.getProperty("java.vm.compressedOopsMode") != null ? 4 : 8;
        java.util.ArrayList<String> opts = new java.util.ArrayList<String>();
        words(opts, System.getenv("JAVA_TOOL_OPTIONS"));
        words(opts, System.getenv("JDK_JAVA_OPTIONS"));
        try {
            java.io.FileInputStream in = new java.io.FileInputStream("/proc/self/cmdline");
            try {
                java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
                byte[] buf = new byte[8192];
                for (int n; (n = in.read(buf)) > 0; ) b.write(buf, 0, n);
                for (String s : new String(b.toByteArray(), "UTF-8").split("\0")) opts.add(s);
            } finally {
                in.close();
            }
        } catch (Throwable t) {
            // not Linux: the environment alone
        }
        words(opts, System.getenv("_JAVA_OPTIONS"));
        Boolean compact = null, classPointers = null;
        for (String o : opts) {
            if (o.equals("-XX:+UseCompactObjectHeaders")) compact = Boolean.TRUE;
            else if (o.equals("-XX:-UseCompactObjectHeaders")) compact = Boolean.FALSE;
            else if (o.equals("-XX:+UseCompressedClassPointers")) classPointers = Boolean.TRUE;
            else if (o.equals("-XX:-UseCompressedClassPointers")) classPointers = Boolean.FALSE;
        }
        int header = Boolean.TRUE.equals(compact) ? 8 : Boolean.FALSE.equals(classPointers) ? 16 : 12;
        return new int[] {ref, header};
    }

    private static void words(java.util.List<String> out, String s) {
        if (s == null) return;
        for (String w : s.trim().split("\\s+")) if (!w.isEmpty()) out.add(w);
    }

    static long align(long n) { return (n + ALIGN - 1) & -ALIGN; }

    /** Bytes of one array of the given length and element size. */
    static long array(long length, int elementSize) {
        long base = ARRAY_BASE;
        if (elementSize == 8 && base % 8 != 0) base = align(base); // long[]/double[] elements are 8-aligned
        return align(base + length * elementSize);
    }

    /** Element size for a JVM descriptor character (B C D F I J S Z, anything else is a reference). */
    static int element(char t) {
        switch (t) {
            case 'B': case 'Z': return 1;
            case 'C': case 'S': return 2;
            case 'I': case 'F': return 4;
            case 'J': case 'D': return 8;
            default: return REF;
        }
    }

    /**
     * Shallow size of an instance of c. Called at snapshot time, never on the allocation path,
     * because reflection may load the classes of field types.
     */
    static long instance(Class<?> c) {
        if (UNSAFE != null) {
            long end = OBJECT_HEADER;
            try {
                for (Class<?> k = c; k != null; k = k.getSuperclass()) {
                    for (Field f : k.getDeclaredFields()) {
                        if (Modifier.isStatic(f.getModifiers())) continue;
                        long off = (Long) FIELD_OFFSET.invoke(UNSAFE, f);
                        int size = fieldSize(f.getType());
                        if (off + size > end) end = off + size;
                    }
                }
                return align(end);
            } catch (Throwable t) {
                // e.g. hidden and record classes, which objectFieldOffset refuses: the rule
            }
        }
        return layout(c);
    }

    /**
     * HotSpot's field layout (JDK 15 on) as far as sizes go. The superclass's fields come first;
     * then, for each class, its primitive fields by decreasing size and then its reference
     * fields, one at a time, each at its natural alignment in the smallest free gap that holds
     * it (gaps the superclasses left included; of equal gaps the highest), or else at the end.
     * The size is the end of the last field, rounded up. analysis/hprof's Model.Extend is the
     * same rule for heap dumps. @Contended padding and fields the VM injects (Thread has both)
     * are not seen.
     */
    static long layout(Class<?> c) {
        java.util.ArrayList<Class<?>> chain = new java.util.ArrayList<Class<?>>();
        for (Class<?> k = c; k != null; k = k.getSuperclass()) chain.add(k);
        Layout l = new Layout(OBJECT_HEADER);
        for (int i = chain.size() - 1; i >= 0; i--) {
            Field[] fields;
            try {
                fields = chain.get(i).getDeclaredFields();
            } catch (Throwable t) {
                continue; // a field type that cannot be loaded: that class's fields are not counted
            }
            int[] bySize = new int[9];
            int refs = 0;
            for (Field f : fields) {
                if (Modifier.isStatic(f.getModifiers())) continue;
                if (f.getType().isPrimitive()) bySize[fieldSize(f.getType())]++;
                else refs++;
            }
            for (int size = 8; size >= 1; size >>= 1) {
                for (int n = 0; n < bySize[size]; n++) l.place(size);
            }
            for (int n = 0; n < refs; n++) l.place(REF);
        }
        return align(l.end);
    }

    /** The free gaps below end, in offset order, as [start, end) pairs. */
    private static final class Layout {
        int[] gaps = new int[8];
        int n; // ints used in gaps
        int end;

        Layout(int header) { end = header; }

        /** Places a field of size bytes, aligned to its size. */
        void place(int size) {
            int best = -1;
            for (int i = n - 2; i >= 0; i -= 2) {
                int from = gaps[i], room = gaps[i + 1] - from;
                int skip = (size - from % size) % size;
                if (skip + size <= room && (best < 0 || room < gaps[best + 1] - gaps[best])) best = i;
            }
            if (best < 0) {
                int at = (end + size - 1) / size * size;
                if (at > end) insert(n, end, at);
                end = at + size;
                return;
            }
            int from = gaps[best], to = gaps[best + 1];
            int at = (from + size - 1) / size * size;
            remove(best);
            if (at + size < to) insert(best, at + size, to);
            if (at > from) insert(best, from, at);
        }

        private void insert(int i, int from, int to) {
            if (n + 2 > gaps.length) gaps = java.util.Arrays.copyOf(gaps, gaps.length * 2);
            System.arraycopy(gaps, i, gaps, i + 2, n - i);
            gaps[i] = from;
            gaps[i + 1] = to;
            n += 2;
        }

        private void remove(int i) {
            System.arraycopy(gaps, i + 2, gaps, i, n - i - 2);
            n -= 2;
        }
    }

    private static int fieldSize(Class<?> t) {
        if (!t.isPrimitive()) return REF;
        if (t == long.class || t == double.class) return 8;
        if (t == int.class || t == float.class) return 4;
        if (t == short.class || t == char.class) return 2;
        return 1;
    }
}
