package heapledger.maven;

import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;

/**
 * Gives the project back the class directories the compiler wrote, so packaging takes the
 * classes as compiled. Nothing is copied: the rewrite goals never wrote into them.
 */
@Mojo(name = "restore", defaultPhase = LifecyclePhase.PREPARE_PACKAGE, threadSafe = true)
public class RestoreMojo extends AbstractHeapledgerMojo {
    @Override
    public void execute() {
        Object classes = project.getContextValue(ORIGINAL_CLASSES);
        if (classes != null) {
            project.getBuild().setOutputDirectory((String) classes);
            project.setContextValue(ORIGINAL_CLASSES, null);
            getLog().info("heapledger: packaging goes on with " + classes);
        }
        Object tests = project.getContextValue(ORIGINAL_TEST_CLASSES);
        if (tests != null) {
            project.getBuild().setTestOutputDirectory((String) tests);
            project.setContextValue(ORIGINAL_TEST_CLASSES, null);
        }
    }
}
