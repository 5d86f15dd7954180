// Java 25 flexible constructor bodies: statements, a branch, a loop and a throw before super().
class Base {
    final int v;

    Base(int v) {
        this.v = v;
    }
}

public class Prologue extends Base {
    final String s;

    Prologue(int x) {
        if (x < 0) throw new IllegalArgumentException();
        int y = x * 2;
        for (int i = 0; i < 3; i++) y += i;
        s = String.valueOf(y);
        super(y);
    }

    Prologue(String t) {
        this(t == null ? 0 : t.length());
    }
}
