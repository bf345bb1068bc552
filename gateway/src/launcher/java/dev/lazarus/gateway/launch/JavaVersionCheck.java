package dev.lazarus.gateway.launch;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The jar's {@code Main-Class}: on a Java older than 25 it says so in one line and exits 1, where the JVM would
 * otherwise stop with an {@code UnsupportedClassVersionError} and a stack trace; on 25 or newer it hands over to
 * Spring Boot's launcher. Compiled for Java 8 (a build step of its own) so that any JVM users still have can run it;
 * hence no newer language or API here.
 */
public final class JavaVersionCheck {

    static final int REQUIRED = 25;
    static final String BOOT_LAUNCHER = "org.springframework.boot.loader.launch.JarLauncher";

    private JavaVersionCheck() {}

    public static void main(String[] args) throws Throwable {
        String found = System.getProperty("java.specification.version", "");
        if (feature(found) < REQUIRED) {
            System.err.println("Lazarus needs Java " + REQUIRED + " or newer (found " + found.replaceFirst("^1\\.", "")
                    + " at " + System.getProperty("java.home") + "): run this jar with a Java " + REQUIRED + " runtime");
            System.exit(1);
        }
        MethodHandle main = MethodHandles.publicLookup().findStatic(Class.forName(BOOT_LAUNCHER), "main",
                MethodType.methodType(void.class, String[].class));
        main.invokeExact(args);
    }

    /** The feature release from {@code java.specification.version}: "1.8" is 8, "17" is 17; unreadable is 0. */
    static int feature(String specificationVersion) {
        String v = specificationVersion.startsWith("1.") ? specificationVersion.substring(2) : specificationVersion;
        int end = 0;
        while (end < v.length() && Character.isDigit(v.charAt(end))) {
            end++;
        }
        return end == 0 ? 0 : Integer.parseInt(v.substring(0, end));
    }
}
