package heapledger.maven;

import java.io.File;

import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;

/**
 * Rewrites the project's packaged jar into target/heapledger/jar/, under the jar's own name:
 * a copy to deploy with heapledger-runtime.jar where the program runs. The Gradle plugin's
 * rewriteJar = true.
 */
@Mojo(name = "rewrite-jar", defaultPhase = LifecyclePhase.PACKAGE, threadSafe = true)
public class RewriteJarMojo extends AbstractHeapledgerMojo {
    @Override
    public void execute() throws MojoExecutionException, MojoFailureException {
        if (!enabled) {
            getLog().info("heapledger: disabled");
            return;
        }
        File jar = project.getArtifact() == null ? null : project.getArtifact().getFile();
        if (jar == null || !jar.isFile()) {
            jar = new File(project.getBuild().getDirectory(), project.getBuild().getFinalName() + ".jar");
        }
        if (!jar.isFile()) {
            throw new MojoExecutionException("heapledger: no jar to rewrite (" + jar + "): bind rewrite-jar after the jar is packaged");
        }
        rewrite(jar, new File(project.getBuild().getDirectory(), "heapledger/jar"), jar.getName());
    }
}
