package dev.lazarus.kt.synthetic;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The Java steps of {@code scripts/train-default-model} (see {@link DefaultModel}):
 * <pre>
 *   DefaultModelMain prepare &lt;sentences.txt&gt; &lt;payload dir&gt;
 *   DefaultModelMain write &lt;payload dir&gt; &lt;weights.bin&gt; &lt;loss line&gt; &lt;out.gguf&gt;
 * </pre>
 */
public final class DefaultModelMain {

    private DefaultModelMain() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 3 && args[0].equals("prepare")) {
            DefaultModel.prepare(Path.of(args[1]), Path.of(args[2]));
        } else if (args.length == 5 && args[0].equals("write")) {
            DefaultModel.write(Path.of(args[1]), Path.of(args[2]), args[3], Path.of(args[4]));
            System.out.println("wrote " + args[4]);
        } else {
            System.err.println("usage: DefaultModelMain prepare <sentences.txt> <payload dir>");
            System.err.println("       DefaultModelMain write <payload dir> <weights.bin> <loss line> <out.gguf>");
            System.exit(2);
        }
    }
}
