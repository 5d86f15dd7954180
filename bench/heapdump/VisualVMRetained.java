import java.io.File;
import java.util.List;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

/** The peer: VisualVM's heap library computing the biggest objects by retained size. */
public class VisualVMRetained {
    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        long t1 = System.nanoTime();
        List<Instance> top = heap.getBiggestObjectsByRetainedSize(Integer.parseInt(args.length > 1 ? args[1] : "10"));
        long t2 = System.nanoTime();
        for (Instance i : top) {
            System.out.println(i.getRetainedSize() + "\t" + i.getJavaClass().getName() + "#" + i.getInstanceNumber());
        }
        System.out.printf("visualvm: load %.1f s, retained sizes %.1f s%n", (t1 - t0) / 1e9, (t2 - t1) / 1e9);
    }
}
