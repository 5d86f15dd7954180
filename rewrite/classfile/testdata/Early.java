package feat;

// Java 25 (JEP 513): statements before super(), and a switch with record patterns.
public class Early extends Base {
    final int v;
    Early(int x) {
        if (x < 0) throw new IllegalArgumentException("negative");
        int y = x * 2;
        v = y;
        super(y);
    }
    static String kind(Object o) {
        return switch (o) {
            case Integer i when i > 10 -> "big";
            case Integer i -> "int";
            case String s -> "str" + s.length();
            default -> "other";
        };
    }
}
class Base { Base(int n) {} }
