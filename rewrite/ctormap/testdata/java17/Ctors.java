import java.util.ArrayList;
import java.util.List;

// Constructors javac 17 compiles with work before super(): an inner class stores its outer
// instance first, a conditional in the super() arguments branches while `this` is
// uninitialized, and a super() argument allocates objects of its own.
public class Ctors extends ArrayList<Object> {
    final int n;

    Ctors(int n) {
        super(n > 0 ? n : new Integer(-n).intValue());
        this.n = n;
    }

    Ctors() {
        this(new StringBuilder("x").length());
    }

    Ctors(List<Object> from) {
        super(from);
        try {
            n = Integer.parseInt(String.valueOf(from.size()));
        } catch (NumberFormatException e) {
            throw new IllegalStateException(e);
        }
    }

    class Inner {
        final Object o;

        Inner() {
            o = new Object();
        }
    }

    static Object make(boolean b) {
        return b ? new Ctors(new ArrayList<Object>(List.of(1, 2))) : new StringBuilder(new String("s"));
    }
}
