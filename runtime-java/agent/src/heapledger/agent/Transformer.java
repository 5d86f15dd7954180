package heapledger.agent;

import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;

/**
 * Hands each class of an application or custom loader to the transform service. Classes of
 * heapledger itself, of the bootstrap and platform loaders (the JDK), and classes loaded while
 * this thread is already inside the transformer or is one of the agent's own threads pass
 * through untouched, so the agent never instruments itself and never recurses.
 */
final class Transformer implements ClassFileTransformer {
    private final Agent agent;
    private final ClassLoader platform;

    Transformer(Agent agent) {
        this.agent = agent;
        ClassLoader sys = ClassLoader.getSystemClassLoader();
        this.platform = sys == null ? null : sys.getParent();
    }

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined, ProtectionDomain pd, byte[] classFile) {
        if (className == null || classFile == null || className.startsWith("heapledger/")) return null;
        if (loader == null || loader == platform) return null;
        boolean[] busy = Agent.BUSY.get();
        if (busy[0]) return null;
        busy[0] = true;
        try {
            return agent.transform(loader, className, classFile);
        } catch (Throwable e) {
            agent.internalError(className, e);
            return null;
        } finally {
            busy[0] = false;
        }
    }

    /** Whether the transformer would send this loaded class (attach and detach use it). */
    boolean wants(Class<?> c) {
        if (c.isArray() || c.isPrimitive()) return false;
        ClassLoader l = c.getClassLoader();
        return l != null && l != platform && !c.getName().startsWith("heapledger.");
    }
}
