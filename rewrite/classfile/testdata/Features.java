package feat;

import java.io.*;
import java.util.*;
import java.util.function.*;

// Exercises the class-file structures javac 17 emits: records, sealed hierarchies, nestmates,
// lambdas and method references (invokedynamic, BootstrapMethods), string concatenation
// (indy), switch on strings and enums, try-with-resources, nested finally, long/double constants,
// non-ASCII strings, generic signatures, annotations with type annotations in code.
public sealed interface Features permits Features.Circle, Features.Square, Features.Poly {
    record Circle(double r) implements Features {}
    record Square(long side) implements Features {}
    final class Poly implements Features {
        private final List<@Tag("x") Integer> sides = new ArrayList<>();
        private int secret = 7;
        class Inner { int peek() { return secret; } }
    }

    @java.lang.annotation.Retention(java.lang.annotation.RetentionPolicy.RUNTIME)
    @java.lang.annotation.Target({java.lang.annotation.ElementType.TYPE_USE, java.lang.annotation.ElementType.TYPE})
    @interface Tag { String value(); }

    enum Color { RED, GREEN, BLUE }

    static double area(Features f) {
        if (f instanceof Circle c) return Math.PI * c.r() * c.r();
        if (f instanceof Square s) return (double) s.side() * s.side();
        return 0;
    }

    static String describe(Object o, Color c) throws IOException {
        String s = switch (c) { case RED -> "r"; case GREEN -> "g"; default -> "b"; };
        switch (String.valueOf(o)) {
            case "a": s += "A"; break;
            case "bb": s += "B"; break;
            default: s += o;
        }
        long big = 1234567890123L;
        double d = 3.25e100;
        float f = 1.5f;
        String greek = "\u03b1\u03b2\u03b3 \0 \ud83d\ude00";
        return s + big + d + f + greek;
    }

    static int resources(String path) throws Exception {
        int n = 0;
        try (Reader r = new StringReader(path); BufferedReader b = new BufferedReader(r)) {
            try {
                n = b.read();
            } finally {
                try {
                    n++;
                } finally {
                    n += 2;
                }
            }
        } catch (IOException | RuntimeException e) {
            n = -1;
        }
        return n;
    }

    static <T extends Comparable<T>> List<T> sorted(Collection<T> in) {
        List<T> out = new ArrayList<>(in);
        out.sort(Comparator.naturalOrder());
        Function<T, String> f = Object::toString;
        Supplier<int[][]> g = () -> new int[3][4];
        out.forEach(x -> f.apply(x));
        return g.get().length > 0 ? out : null;
    }
}
