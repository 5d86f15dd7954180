package heapledger.agent;

import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;

import heapledger.rt.Acct;
import heapledger.rt.Ledger;
import heapledger.rt.ObjectHook;

/**
 * Hands each class of an application or custom loader to the transform service. Classes of
 * heapledger itself, of the bootstrap and platform loaders and of the JDK's runtime image (the
 * JDK, unless --jdk), and classes
 * loaded while this thread is already inside the transformer or is one of the agent's own
 * threads pass through untouched, so the agent never instruments itself and never recurses.
 */
final class Transformer implements ClassFileTransformer {
    /**
     * JDK classes that --jdk never rewrites (prefixes of internal names), and why
     * (docs/agent.md, "JDK classes"):
     * <ul>
     * <li>java/lang/Thread*, ThreadLocal*, java/lang/ref/: Ledger.here() and the runtime's
     * per-thread state run on them; rewritten, the first here() of a thread would call itself.
     * <li>java/lang/invoke/, sun/invoke/: lambdas and string concatenation are bootstrapped
     * there, also while the runtime and the agent run.
     * <li>jdk/internal/: Unsafe, the VM's start-up and shutdown, the class loaders' internals:
     * rewritten, loading a class could call code that needs the class being loaded.
     * <li>java/lang/Class*, java/lang/Object, java/lang/System, java/lang/Shutdown: class
     * loading and JVM exit, for the same reason.
     * <li>java/lang/StringConcatHelper: the count pass already counts the String of a string
     * concatenation at the program's call site; counting its `new String` again inside would
     * count every concatenated String twice.
     * </ul>
     */
    static final String[] JDK_EXCLUDED = {
        "java/lang/Thread", "java/lang/ref/", "java/lang/invoke/", "sun/invoke/", "jdk/internal/",
        "java/lang/Class", "java/lang/Object", "java/lang/System", "java/lang/Shutdown",
        "java/lang/StringConcatHelper",
    };

    private final Agent agent;
    private final ClassLoader platform;
    private final boolean jdk;
    private final boolean objectInit;

    Transformer(Agent agent, boolean jdk, boolean objectInit) {
        this.agent = agent;
        this.jdk = jdk;
        this.objectInit = objectInit;
        ClassLoader sys = ClassLoader.getSystemClassLoader();
        this.platform = sys == null ? null : sys.getParent();
    }

    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined, ProtectionDomain pd, byte[] classFile) {
        if (className == null || classFile == null || !wants(loader, className)) return null;
        if (!jdk && fromRuntimeImage(pd)) return null;
        boolean[] busy = Agent.BUSY.get();
        if (busy[0]) return null;
        busy[0] = true;
        // With JDK classes rewritten, what the agent allocates in JDK code here must not be
        // charged to the program's thread; nor what it constructs, with Object.<init> hooked.
        boolean hooked = ObjectHook.pause();
        Acct muted = jdk ? Ledger.mute() : null;
        try {
            return agent.transform(loader, className, redefined, classFile);
        } catch (Throwable e) {
            agent.internalError(className, e);
            return null;
        } finally {
            if (jdk) Ledger.unmute(muted);
            ObjectHook.resume(hooked);
            busy[0] = false;
        }
    }

    private boolean wants(ClassLoader loader, String internalName) {
        // heapledger's own packages (rewrite/passes.RuntimePackages): never rewritten.
        if (internalName.startsWith("heapledger/rt/") || internalName.startsWith("heapledger/probe/")
                || internalName.startsWith("heapledger/agent/") || internalName.startsWith("heapledger/verify/")) return false;
        // Reflection's generated accessors (Java 8 to 21: a class spun per constructor or
        // method called often, defined by its own loader) make the object of a
        // Constructor.newInstance that the caller's reflect site already counts; rewritten,
        // every such object after the first calls would count twice. Offline rewriting never
        // sees them either.
        if (internalName.startsWith("jdk/internal/reflect/Generated") || internalName.startsWith("sun/reflect/Generated")) return false;
        if (loader != null && loader != platform) return true;
        // Object itself is excluded from --jdk (class loading runs its constructor); only the
        // hook, which adds a guarded call and nothing else, rewrites it.
        if (objectInit && loader == null && internalName.equals("java/lang/Object")) return true;
        return jdk && !jdkExcluded(internalName);
    }

    /**
     * A class of the JDK's runtime image that the application loader defines (jdk.compiler's
     * javac, for one): the JDK's like those of its own loaders, which the count pass assumes
     * are not rewritten (rewrite/passes/neutral.go), and offline rewriting never sees.
     */
    static boolean fromRuntimeImage(ProtectionDomain pd) {
        java.security.CodeSource cs = pd == null ? null : pd.getCodeSource();
        java.net.URL u = cs == null ? null : cs.getLocation();
        return u != null && "jrt".equals(u.getProtocol());
    }

    static boolean jdkExcluded(String internalName) {
        for (String p : JDK_EXCLUDED) {
            if (internalName.startsWith(p)) return true;
        }
        return false;
    }

    /** Whether the transformer would send this loaded class (attach and detach use it). */
    boolean wants(Class<?> c) {
        if (c.isArray() || c.isPrimitive()) return false;
        return wants(c.getClassLoader(), c.getName().replace('.', '/'));
    }

    /** A loaded class of the JDK's loaders (bootstrap or platform). */
    boolean isJdk(Class<?> c) {
        ClassLoader l = c.getClassLoader();
        return l == null || l == platform;
    }
}
