package dev.lazarus.kt.chat;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Python {@code str} methods that chat templates call ({@code .strip()}, {@code .split()},
 * {@code .startswith()}, ...), with Python's semantics. Jinjava would otherwise reach Java's
 * {@code String} methods of the same name, whose meaning differs ({@code split} takes a regex and
 * drops trailing empty strings, {@code strip} takes no characters) or that do not exist.
 */
final class PythonStringMethods extends ELResolver {

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (!(base instanceof String s) || method == null) {
            return null;
        }
        Object[] args = params == null ? new Object[0] : params;
        Object result = call(s, method.toString(), args);
        if (result != NOT_HANDLED) {
            context.setPropertyResolved(true);
            return result;
        }
        return null;
    }

    private static final Object NOT_HANDLED = new Object();

    private static Object call(String s, String method, Object[] args) {
        return switch (method) {
            case "strip" -> rstrip(lstrip(s, chars(args)), chars(args));
            case "lstrip" -> lstrip(s, chars(args));
            case "rstrip" -> rstrip(s, chars(args));
            case "startswith" -> anyOf(args, s::startsWith);
            case "endswith" -> anyOf(args, s::endsWith);
            case "split" -> split(s, args.length > 0 ? args[0] : null, args.length > 1 ? ((Number) args[1]).intValue() : -1);
            case "upper" -> s.toUpperCase(Locale.ROOT);
            case "lower" -> s.toLowerCase(Locale.ROOT);
            case "title" -> title(s);
            case "capitalize" -> s.isEmpty() ? s : s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1).toLowerCase(Locale.ROOT);
            case "replace" -> args.length > 2 ? replace(s, str(args[0]), str(args[1]), ((Number) args[2]).intValue())
                    : s.replace(str(args[0]), str(args[1]));
            case "find" -> s.indexOf(str(args[0]));
            case "count" -> count(s, str(args[0]));
            case "join" -> join(s, args[0]);
            default -> NOT_HANDLED;
        };
    }

    private static String str(Object o) {
        return o == null ? "None" : o.toString();
    }

    /** Python strips whitespace when no characters are given. */
    private static String chars(Object[] args) {
        return args.length == 0 || args[0] == null ? null : args[0].toString();
    }

    private static boolean strippable(char c, String chars) {
        return chars == null ? Character.isWhitespace(c) || Character.isSpaceChar(c) : chars.indexOf(c) >= 0;
    }

    private static String lstrip(String s, String chars) {
        int i = 0;
        while (i < s.length() && strippable(s.charAt(i), chars)) {
            i++;
        }
        return s.substring(i);
    }

    private static String rstrip(String s, String chars) {
        int i = s.length();
        while (i > 0 && strippable(s.charAt(i - 1), chars)) {
            i--;
        }
        return s.substring(0, i);
    }

    private static boolean anyOf(Object[] args, java.util.function.Predicate<String> test) {
        if (args.length > 0 && args[0] instanceof Collection<?> options) {
            return options.stream().anyMatch(o -> test.test(str(o)));
        }
        return args.length > 0 && test.test(str(args[0]));
    }

    private static List<String> split(String s, Object separator, int maxSplit) {
        List<String> parts = new ArrayList<>();
        if (separator == null) {
            // no separator: runs of whitespace separate, empty strings never appear
            for (String part : s.strip().split("\\s+", maxSplit < 0 ? 0 : maxSplit + 1)) {
                if (!part.isEmpty()) {
                    parts.add(part);
                }
            }
            return parts;
        }
        String sep = separator.toString();
        if (sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        int from = 0;
        int at;
        while ((maxSplit < 0 || parts.size() < maxSplit) && (at = s.indexOf(sep, from)) >= 0) {
            parts.add(s.substring(from, at));
            from = at + sep.length();
        }
        parts.add(s.substring(from));
        return parts;
    }

    private static String title(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean previousCased = false;
        for (char c : s.toCharArray()) {
            sb.append(previousCased ? Character.toLowerCase(c) : Character.toUpperCase(c));
            previousCased = Character.isLetter(c);
        }
        return sb.toString();
    }

    private static String replace(String s, String old, String replacement, int count) {
        String out = s;
        int from = 0;
        for (int n = 0; n < count; n++) {
            int at = out.indexOf(old, from);
            if (at < 0) {
                break;
            }
            out = out.substring(0, at) + replacement + out.substring(at + old.length());
            from = at + replacement.length();
        }
        return out;
    }

    private static int count(String s, String sub) {
        if (sub.isEmpty()) {
            return s.length() + 1;
        }
        int n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
            n++;
        }
        return n;
    }

    private static String join(String separator, Object items) {
        List<String> parts = new ArrayList<>();
        if (items instanceof Iterable<?> it) {
            it.forEach(o -> parts.add(str(o)));
        }
        return String.join(separator, parts);
    }

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {}

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
