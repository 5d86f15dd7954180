import java.io.FileOutputStream;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import static org.objectweb.asm.Opcodes.*;

/**
 * Writes dead/Tail.class with ASM's COMPUTE_FRAMES, as ASM-based compilers (Clojure, JRuby,
 * Groovy) emit code: ASM turns every unreachable block into "nop ... athrow" under a frame with
 * no locals and a Throwable on the stack. Tail.make(n) returns n new Objects in an array and has
 * unreachable code after its return and after a throw; main prints its result.
 */
public class DeadTail {
    public static void main(String[] args) throws Exception {
        ClassWriter cw = new ClassWriter(ClassWriter.COMPUTE_FRAMES);
        cw.visit(V17, ACC_PUBLIC | ACC_SUPER, "dead/Tail", null, "java/lang/Object", null);

        MethodVisitor mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "make", "(I)[Ljava/lang/Object;", null, null);
        mv.visitCode();
        Label ok = new Label(), loop = new Label(), done = new Label();
        mv.visitVarInsn(ILOAD, 0);
        mv.visitJumpInsn(IFGE, ok);
        mv.visitTypeInsn(NEW, "java/lang/IllegalArgumentException");
        mv.visitInsn(DUP);
        mv.visitMethodInsn(INVOKESPECIAL, "java/lang/IllegalArgumentException", "<init>", "()V", false);
        mv.visitInsn(ATHROW);
        mv.visitTypeInsn(NEW, "java/lang/Object"); // unreachable: after a throw
        mv.visitInsn(ARETURN);
        mv.visitLabel(ok);
        mv.visitVarInsn(ILOAD, 0);
        mv.visitTypeInsn(ANEWARRAY, "java/lang/Object");
        mv.visitVarInsn(ASTORE, 1);
        mv.visitInsn(ICONST_0);
        mv.visitVarInsn(ISTORE, 2);
        mv.visitLabel(loop);
        mv.visitVarInsn(ILOAD, 2);
        mv.visitVarInsn(ILOAD, 0);
        mv.visitJumpInsn(IF_ICMPGE, done);
        mv.visitVarInsn(ALOAD, 1);
        mv.visitVarInsn(ILOAD, 2);
        mv.visitTypeInsn(NEW, "java/lang/Object");
        mv.visitInsn(DUP);
        mv.visitMethodInsn(INVOKESPECIAL, "java/lang/Object", "<init>", "()V", false);
        mv.visitInsn(AASTORE);
        mv.visitIincInsn(2, 1);
        mv.visitJumpInsn(GOTO, loop);
        mv.visitLabel(done);
        mv.visitVarInsn(ALOAD, 1);
        mv.visitInsn(ARETURN);
        mv.visitInsn(ICONST_1); // unreachable: after the return
        mv.visitTypeInsn(ANEWARRAY, "java/lang/String");
        mv.visitInsn(ARETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();

        mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "main", "([Ljava/lang/String;)V", null, null);
        mv.visitCode();
        mv.visitFieldInsn(GETSTATIC, "java/lang/System", "out", "Ljava/io/PrintStream;");
        mv.visitIntInsn(BIPUSH, 7);
        mv.visitMethodInsn(INVOKESTATIC, "dead/Tail", "make", "(I)[Ljava/lang/Object;", false);
        mv.visitInsn(ARRAYLENGTH);
        mv.visitMethodInsn(INVOKEVIRTUAL, "java/io/PrintStream", "println", "(I)V", false);
        mv.visitInsn(RETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
        cw.visitEnd();

        new java.io.File(args[0], "dead").mkdirs();
        try (FileOutputStream out = new FileOutputStream(new java.io.File(args[0], "dead/Tail.class"))) {
            out.write(cw.toByteArray());
        }
    }
}
