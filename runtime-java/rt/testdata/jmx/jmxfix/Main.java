package jmxfix;

import java.util.ArrayList;
import java.util.List;

/**
 * Keeps N items alive and waits until its standard input closes, so that a JMX client can ask
 * the runtime for a snapshot meanwhile: the snapshot must show exactly N live items.
 */
public class Main {
    static final class Item {
        final int value;

        Item(int value) {
            this.value = value;
        }
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        List<Item> keep = new ArrayList<Item>();
        for (int i = 0; i < n; i++) {
            keep.add(new Item(i));
            new Item(-i); // garbage: allocated, never live at the snapshot
        }
        System.out.println("ready " + keep.size());
        System.out.flush();
        while (System.in.read() >= 0) {
            // the test closes stdin when it is done
        }
        System.out.println("done " + keep.size());
    }
}
