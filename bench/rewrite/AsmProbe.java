import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.commons.AdviceAdapter;

/**
 * The peer of heapledger's probe pass, written the way an ASM-based agent would: ClassReader with
 * EXPAND_FRAMES, AdviceAdapter, ClassWriter with COMPUTE_MAXS. Inserted code is the same as
 * heapledger's: enter() into a new local at entry (after super()/this() in constructors, where
 * AdviceAdapter calls onMethodEnter), exit(token) before every return, a handler covering the body
 * that calls unwind(token) and rethrows, alloc() after new, dup + array(Object) after array
 * creation.
 *
 * <p>Frames: we chose EXPAND_FRAMES + COMPUTE_MAXS rather than COMPUTE_FRAMES, because
 * COMPUTE_FRAMES must guess common supertypes by loading classes (getCommonSuperClass), which is
 * both slow and a classic source of VerifyErrors. The only new branch target is the handler, and
 * its frame is written by hand: every local TOP except the token (an int), stack [Throwable]. That
 * frame is valid for any code the handler covers, since TOP accepts every type.
 *
 * <p>Modes: {@code rewrite -j N IN.jar... -o OUTDIR} rewrites jars in parallel into OUTDIR (one
 * output jar per input, other entries copied); {@code throughput SECONDS IN.jar...} loads every
 * class into memory and transforms them in a loop on one thread, printing classes/s after a
 * warm-up of the same length.
 */
public final class AsmProbe {
    static final String PROBE = "heapledger/probe/Probe";

    public static void main(String[] args) throws Exception {
        if (args.length >= 2 && args[0].equals("throughput")) {
            throughput(Double.parseDouble(args[1]), sub(args, 2));
            return;
        }
        if (args.length >= 1 && args[0].equals("rewrite")) {
            int jobs = Runtime.getRuntime().availableProcessors();
            String outDir = null;
            List<String> ins = new ArrayList<>();
            for (int i = 1; i < args.length; i++) {
                if (args[i].equals("-j")) {
                    jobs = Integer.parseInt(args[++i]);
                } else if (args[i].equals("-o")) {
                    outDir = args[++i];
                } else {
                    ins.add(args[i]);
                }
            }
            if (outDir == null || ins.isEmpty()) usage();
            rewrite(ins, new File(outDir), jobs);
            return;
        }
        usage();
    }

    static void usage() {
        System.err.println("usage: AsmProbe rewrite [-j N] -o OUTDIR IN.jar...\n       AsmProbe throughput SECONDS IN.jar...");
        System.exit(2);
    }

    static String[] sub(String[] a, int from) {
        String[] r = new String[a.length - from];
        System.arraycopy(a, from, r, 0, r.length);
        return r;
    }

    /** Returns the rewritten class, or null when it must stay as it was. */
    static byte[] transform(byte[] in) {
        ClassReader cr = new ClassReader(in);
        String name = cr.getClassName();
        if (name.startsWith("heapledger/") || name.endsWith("module-info") || name.endsWith("package-info")) {
            return null;
        }
        ClassWriter cw = new ClassWriter(cr, ClassWriter.COMPUTE_MAXS);
        try {
            cr.accept(new ProbeClass(cw), ClassReader.EXPAND_FRAMES);
            return cw.toByteArray();
        } catch (RuntimeException e) {
            // MethodTooLargeException, ClassTooLargeException, or input ASM cannot handle: ASM
            // works per class, so the whole class stays unmodified.
            return null;
        }
    }

    static final class ProbeClass extends ClassVisitor {
        int version;

        ProbeClass(ClassVisitor cv) {
            super(Opcodes.ASM9, cv);
        }

        @Override
        public void visit(int version, int access, String name, String sig, String sup, String[] ifs) {
            this.version = version & 0xFFFF;
            super.visit(version, access, name, sig, sup, ifs);
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exc) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, exc);
            if ((access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) != 0 || mv == null) return mv;
            return new ProbeMethod(mv, access, name, desc, version >= Opcodes.V1_6);
        }
    }

    static final class ProbeMethod extends AdviceAdapter {
        final boolean frames;
        final Label start = new Label();
        int token = -1;

        ProbeMethod(MethodVisitor mv, int access, String name, String desc, boolean frames) {
            super(Opcodes.ASM9, mv, access, name, desc);
            this.frames = frames;
        }

        @Override
        protected void onMethodEnter() {
            mv.visitMethodInsn(Opcodes.INVOKESTATIC, PROBE, "enter", "()I", false);
            token = newLocal(Type.INT_TYPE);
            storeLocal(token);
            mv.visitLabel(start);
        }

        @Override
        protected void onMethodExit(int opcode) {
            if (opcode != Opcodes.ATHROW && token >= 0) {
                loadLocal(token);
                mv.visitMethodInsn(Opcodes.INVOKESTATIC, PROBE, "exit", "(I)V", false);
            }
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            super.visitTypeInsn(opcode, type);
            if (opcode == Opcodes.NEW) {
                mv.visitMethodInsn(Opcodes.INVOKESTATIC, PROBE, "alloc", "()V", false);
            } else if (opcode == Opcodes.ANEWARRAY) {
                arrayCall();
            }
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            super.visitIntInsn(opcode, operand);
            if (opcode == Opcodes.NEWARRAY) arrayCall();
        }

        @Override
        public void visitMultiANewArrayInsn(String desc, int dims) {
            super.visitMultiANewArrayInsn(desc, dims);
            arrayCall();
        }

        private void arrayCall() {
            mv.visitInsn(Opcodes.DUP);
            mv.visitMethodInsn(Opcodes.INVOKESTATIC, PROBE, "array", "(Ljava/lang/Object;)V", false);
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            if (token >= 0) {
                Label handler = new Label();
                mv.visitLabel(handler);
                if (frames) {
                    // Through LocalVariablesSorter: an empty frame becomes TOP everywhere except
                    // the locals made by newLocal, i.e. the token.
                    visitFrame(Opcodes.F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
                }
                loadLocal(token);
                mv.visitMethodInsn(Opcodes.INVOKESTATIC, PROBE, "unwind", "(I)V", false);
                mv.visitInsn(Opcodes.ATHROW);
                mv.visitTryCatchBlock(start, handler, handler, null);
            }
            super.visitMaxs(maxStack, maxLocals);
        }
    }

    static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[65536];
        for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
        return out.toByteArray();
    }

    static List<byte[]> loadClasses(String[] jars) throws IOException {
        List<byte[]> classes = new ArrayList<>();
        for (String j : jars) {
            try (ZipFile z = new ZipFile(j)) {
                for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements(); ) {
                    ZipEntry ze = e.nextElement();
                    if (!ze.isDirectory() && ze.getName().endsWith(".class")) {
                        try (InputStream in = z.getInputStream(ze)) {
                            classes.add(readAll(in));
                        }
                    }
                }
            }
        }
        return classes;
    }

    /** CPU time of the whole JVM (all threads, JIT and GC included), as the Go harness measures. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static void throughput(double seconds, String[] jars) throws IOException {
        List<byte[]> classes = loadClasses(jars);
        long sink = 0;
        for (int phase = 0; phase < 2; phase++) {
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            long cpu0 = processCpuNanos();
            long t0 = System.nanoTime();
            long done = 0;
            // The deadline is checked per class, so a corpus larger than one period still works.
            for (int i = 0; System.nanoTime() < deadline; i++) {
                byte[] out = transform(classes.get(i % classes.size()));
                sink += out == null ? 0 : out.length;
                done++;
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            double cpuSecs = (processCpuNanos() - cpu0) / 1e9;
            if (phase == 1) {
                System.out.printf("asm classes=%d classes/s=%.0f classes/cpu-s=%.0f bytes-out=%d%n",
                        classes.size(), done / secs, done / cpuSecs, sink);
            }
        }
    }

    static void rewrite(List<String> ins, File outDir, int jobs) throws Exception {
        if (!outDir.isDirectory() && !outDir.mkdirs()) throw new IOException("cannot create " + outDir);
        ExecutorService pool = Executors.newFixedThreadPool(jobs);
        AtomicInteger rewritten = new AtomicInteger(), kept = new AtomicInteger();
        try {
            for (String in : ins) {
                try (ZipFile z = new ZipFile(in)) {
                    List<ZipEntry> entries = new ArrayList<>();
                    List<Future<byte[]>> results = new ArrayList<>();
                    for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements(); ) {
                        ZipEntry ze = e.nextElement();
                        entries.add(ze);
                        final byte[] data;
                        try (InputStream s = z.getInputStream(ze)) {
                            data = readAll(s);
                        }
                        final boolean isClass = ze.getName().endsWith(".class");
                        results.add(pool.submit(() -> {
                            if (!isClass) return data;
                            byte[] r = transform(data);
                            (r == null ? kept : rewritten).incrementAndGet();
                            return r == null ? data : r;
                        }));
                    }
                    File out = new File(outDir, new File(in).getName());
                    try (ZipOutputStream zo = new ZipOutputStream(new FileOutputStream(out))) {
                        for (int i = 0; i < entries.size(); i++) {
                            zo.putNextEntry(new ZipEntry(entries.get(i).getName()));
                            zo.write(results.get(i).get());
                            zo.closeEntry();
                        }
                    }
                }
            }
        } finally {
            pool.shutdown();
        }
        System.err.printf("asm: %d classes rewritten, %d kept%n", rewritten.get(), kept.get());
    }
}
