package bench.parallel;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;

/**
 * The suite's own workload for the allocation shapes the Debian programs lack: many more threads
 * than cores, big primitive arrays (megabytes each, humongous for G1), multi-dimensional arrays,
 * short-lived small objects, and a shared concurrent map under contention. Every task is seeded by
 * its index and the results are combined in index order, so the printed checksums do not depend on
 * scheduling: any difference between modes is a real change in behaviour.
 *
 * Usage: ParallelAlloc THREADS TASKS ARRAY_LONGS
 */
public final class ParallelAlloc {
    private ParallelAlloc() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: ParallelAlloc THREADS TASKS ARRAY_LONGS");
            System.exit(2);
        }
        final int threads = Integer.parseInt(args[0]);
        final int tasks = Integer.parseInt(args[1]);
        final int arrayLongs = Integer.parseInt(args[2]);
        final ConcurrentHashMap<String, LongAdder> shared = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Long>> results = new ArrayList<>();
        for (int t = 0; t < tasks; t++) {
            final int task = t;
            results.add(pool.submit(() -> runTask(task, arrayLongs, shared)));
        }
        long checksum = 17;
        for (Future<Long> f : results) {
            checksum = checksum * 1_000_003L + f.get();
        }
        pool.shutdown();

        // The common fork-join pool adds a second, differently sized set of threads.
        long streamSum = IntStream.range(0, tasks * 20_000).parallel()
                .mapToObj(i -> new long[] {i, (long) i * i % 1_000_003L})
                .mapToLong(a -> a[1] ^ a[0])
                .sum();

        long mapDigest = 0;
        for (Map.Entry<String, LongAdder> e : new TreeMap<>(shared).entrySet()) {
            mapDigest = mapDigest * 31 + e.getKey().hashCode() * 7L + e.getValue().sum();
        }
        System.out.println("RESULT tasks=" + tasks + " checksum=" + Long.toHexString(checksum)
                + " stream=" + Long.toHexString(streamSum) + " keys=" + shared.size()
                + " map=" + Long.toHexString(mapDigest));
    }

    private static long runTask(int task, int arrayLongs, ConcurrentHashMap<String, LongAdder> shared) {
        long seed = 0x9E3779B97F4A7C15L * (task + 1);
        long[] big = new long[arrayLongs];
        for (int i = 0; i < big.length; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            big[i] = seed >>> 20;
        }
        Arrays.sort(big);
        long acc = 0;
        for (int i = 0; i < big.length; i += 97) {
            acc += big[i] * (i + 1);
        }

        int[][] grid = new int[128][512];
        for (int y = 0; y < grid.length; y++) {
            for (int x = 0; x < grid[y].length; x++) {
                grid[y][x] = (int) (big[(y * 512 + x) % big.length] & 0xffff) ^ task;
            }
        }
        for (int y = 1; y < grid.length; y++) {
            for (int x = 0; x < grid[y].length; x++) {
                grid[y][x] += grid[y - 1][x] >> 1;
            }
        }
        acc ^= grid[grid.length - 1][task % 512];

        Map<Integer, String> local = new HashMap<>();
        List<byte[]> chunks = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            int k = (int) ((seed >>> 33) % 5_000);
            String v = "k" + k + ":" + (i & 15);
            local.merge(k, v, (a, b) -> a.length() >= b.length() ? a : b);
            if ((i & 255) == 0) {
                chunks.add(new byte[1024 + (int) ((seed >>> 40) & 0xffff)]);
            }
            if ((i & 63) == 0) {
                shared.computeIfAbsent("w" + (k % 997), s -> new LongAdder()).add(i & 7);
            }
        }
        for (byte[] c : chunks) {
            acc += c.length;
        }
        for (String v : local.values()) {
            acc += v.hashCode();
        }
        return acc;
    }
}
