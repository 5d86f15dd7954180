package heapledger.rt;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

/**
 * The shallow-size model (documented in docs/runtime.md). Arrays: header (mark word + class
 * pointer + length, aligned to the element size) plus length times element size, rounded up to
 * the object alignment. Objects: the JVM's own field layout read through Unsafe (the end of the
 * last field, rounded up), or, when that is unavailable, header plus the sum of field sizes.
 * With an Instrumentation (the agent), getObjectSize on the first instance of each site wins.
 */
final class Sizes {
    static final int ALIGN = 8;
    static final int REF;        // bytes per reference in arrays and fields
    static final int ARRAY_BASE; // offset of element 0 of an Object[] (header incl. length)
    static final int OBJECT_HEADER;
    private static final Object UNSAFE;
    private static final java.lang.reflect.Method FIELD_OFFSET;

    static {
        Object unsafe = null;
        java.lang.reflect.Method fieldOffset = null;
        int ref = 4, base = 16, header = 12;
        try {
            Class<?> c = Class.forName("sun.misc.Unsafe");
            Field f = c.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            unsafe = f.get(null);
            ref = (Integer) c.getMethod("arrayIndexScale", Class.class).invoke(unsafe, Object[].class);
            base = (Integer) c.getMethod("arrayBaseOffset", Class.class).invoke(unsafe, Object[].class);
            header = base - 4; // the array length field follows the object header
            fieldOffset = c.getMethod("objectFieldOffset", Field.class);
        } catch (Throwable t) {
            unsafe = null; // keep the documented defaults (compressed oops and class pointers)
        }
        REF = ref;
        ARRAY_BASE = base;
        OBJECT_HEADER = header;
        UNSAFE = unsafe;
        FIELD_OFFSET = fieldOffset;
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
        long end = OBJECT_HEADER;
        long sum = OBJECT_HEADER;
        boolean exact = UNSAFE != null;
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            Field[] fields;
            try {
                fields = k.getDeclaredFields();
            } catch (Throwable t) {
                exact = false;
                continue;
            }
            for (Field f : fields) {
                if (Modifier.isStatic(f.getModifiers())) continue;
                int size = fieldSize(f.getType());
                sum += size;
                if (exact) {
                    try {
                        long off = (Long) FIELD_OFFSET.invoke(UNSAFE, f);
                        if (off + size > end) end = off + size;
                    } catch (Throwable t) {
                        exact = false; // e.g. hidden/record classes refused by objectFieldOffset
                    }
                }
            }
        }
        return align(exact ? end : sum);
    }

    private static int fieldSize(Class<?> t) {
        if (!t.isPrimitive()) return REF;
        if (t == long.class || t == double.class) return 8;
        if (t == int.class || t == float.class) return 4;
        if (t == short.class || t == char.class) return 2;
        return 1;
    }
}
