// Renders the sunflow benchmark scene at one resolution and saves it as the reference image in
// resources/, which is what `org.sunflow.Benchmark -regen` does for seven resolutions at once;
// one small image keeps the behaviour test fast.
public class SunflowGolden {
    public static void main(String[] args) {
        int resolution = Integer.parseInt(args[0]);
        new org.sunflow.Benchmark(resolution, false, false, true).kernelMain();
    }
}
