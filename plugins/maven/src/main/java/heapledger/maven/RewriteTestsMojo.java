package heapledger.maven;

import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;

/**
 * Rewrites the compiled test classes (target/test-classes) into target/heapledger/test-classes,
 * which Surefire then runs: what the tests allocate themselves is counted too, charged to the
 * accounts of their packages.
 */
@Mojo(name = "rewrite-tests", defaultPhase = LifecyclePhase.PROCESS_TEST_CLASSES, threadSafe = true)
public class RewriteTestsMojo extends AbstractRewriteClassesMojo {
    @Override
    String originalKey() { return ORIGINAL_TEST_CLASSES; }

    @Override
    String name() { return "test-classes"; }

    @Override
    String current() { return project.getBuild().getTestOutputDirectory(); }

    @Override
    void use(String dir) { project.getBuild().setTestOutputDirectory(dir); }
}
