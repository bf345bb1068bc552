package dev.lazarus.kt.grammar;

/**
 * The grammar of the integers between a minimum and a maximum (either may be absent), digit by digit, as
 * llama.cpp's schema converter writes it for {@code minimum}/{@code maximum} and their exclusive forms.
 */
final class IntegerRanges {

    static final long NO_MIN = Long.MIN_VALUE;
    static final long NO_MAX = Long.MAX_VALUE;

    private final StringBuilder out;

    private IntegerRanges(StringBuilder out) {
        this.out = out;
    }

    static String of(long min, long max) {
        StringBuilder out = new StringBuilder();
        new IntegerRanges(out).range(min, max, 16, true);
        return out.toString();
    }

    private void digitRange(char from, char to) {
        out.append('[').append(from);
        if (from != to) {
            out.append('-').append(to);
        }
        out.append(']');
    }

    private void moreDigits(int min, int max) {
        out.append("[0-9]");
        if (min == max && min == 1) {
            return;
        }
        out.append('{').append(min);
        if (max != min) {
            out.append(',');
            if (max != Integer.MAX_VALUE) {
                out.append(max);
            }
        }
        out.append('}');
    }

    /** Numbers of equal length from {@code from} to {@code to}, written as shared prefix and digit ranges. */
    private void uniform(String from, String to) {
        int i = 0;
        while (i < from.length() && i < to.length() && from.charAt(i) == to.charAt(i)) {
            i++;
        }
        if (i > 0) {
            out.append('"').append(from, 0, i).append('"');
        }
        if (i < from.length() && i < to.length()) {
            if (i > 0) {
                out.append(' ');
            }
            int subLen = from.length() - i - 1;
            if (subLen > 0) {
                String fromSub = from.substring(i + 1);
                String toSub = to.substring(i + 1);
                String zeros = "0".repeat(subLen);
                String nines = "9".repeat(subLen);
                boolean toReached = false;
                out.append('(');
                if (fromSub.equals(zeros)) {
                    digitRange(from.charAt(i), (char) (to.charAt(i) - 1));
                    out.append(' ');
                    moreDigits(subLen, subLen);
                } else {
                    out.append('[').append(from.charAt(i)).append("] (");
                    uniform(fromSub, nines);
                    out.append(')');
                    if (from.charAt(i) < to.charAt(i) - 1) {
                        out.append(" | ");
                        if (toSub.equals(nines)) {
                            digitRange((char) (from.charAt(i) + 1), to.charAt(i));
                            toReached = true;
                        } else {
                            digitRange((char) (from.charAt(i) + 1), (char) (to.charAt(i) - 1));
                        }
                        out.append(' ');
                        moreDigits(subLen, subLen);
                    }
                }
                if (!toReached) {
                    out.append(" | ");
                    digitRange(to.charAt(i), to.charAt(i));
                    out.append(' ');
                    uniform(zeros, toSub);
                }
                out.append(')');
            } else {
                out.append('[').append(from.charAt(i)).append('-').append(to.charAt(i)).append(']');
            }
        }
    }

    private void range(long min, long max, int decimalsLeft, boolean topLevel) {
        boolean hasMin = min != NO_MIN;
        boolean hasMax = max != NO_MAX;
        if (hasMin && hasMax) {
            if (min < 0 && max < 0) {
                out.append("\"-\" (");
                range(-max, -min, decimalsLeft, true);
                out.append(')');
                return;
            }
            if (min < 0) {
                out.append("\"-\" (");
                range(0, -min, decimalsLeft, true);
                out.append(") | ");
                min = 0;
            }
            String minS = Long.toString(min);
            String maxS = Long.toString(max);
            for (int digits = minS.length(); digits < maxS.length(); digits++) {
                uniform(minS, "9".repeat(digits));
                minS = "1" + "0".repeat(digits);
                out.append(" | ");
            }
            uniform(minS, maxS);
            return;
        }
        int lessDecimals = Math.max(decimalsLeft - 1, 1);
        if (hasMin) {
            if (min < 0) {
                out.append("\"-\" (");
                range(NO_MIN, -min, decimalsLeft, false);
                out.append(") | [0] | [1-9] ");
                moreDigits(0, decimalsLeft - 1);
            } else if (min == 0) {
                if (topLevel) {
                    out.append("[0] | [1-9] ");
                    moreDigits(0, lessDecimals);
                } else {
                    moreDigits(1, decimalsLeft);
                }
            } else if (min <= 9) {
                char c = (char) ('0' + min);
                char rangeStart = topLevel ? '1' : '0';
                if (c > rangeStart) {
                    digitRange(rangeStart, (char) (c - 1));
                    out.append(' ');
                    moreDigits(1, lessDecimals);
                    out.append(" | ");
                }
                digitRange(c, '9');
                out.append(' ');
                moreDigits(0, lessDecimals);
            } else {
                String minS = Long.toString(min);
                int len = minS.length();
                char c = minS.charAt(0);
                if (c > '1') {
                    digitRange(topLevel ? '1' : '0', (char) (c - 1));
                    out.append(' ');
                    moreDigits(len, lessDecimals);
                    out.append(" | ");
                }
                digitRange(c, c);
                out.append(" (");
                range(Long.parseLong(minS.substring(1)), NO_MAX, lessDecimals, false);
                out.append(')');
                if (c < '9') {
                    out.append(" | ");
                    digitRange((char) (c + 1), '9');
                    out.append(' ');
                    moreDigits(len - 1, lessDecimals);
                }
            }
            return;
        }
        if (hasMax) {
            if (max >= 0) {
                if (topLevel) {
                    out.append("\"-\" [1-9] ");
                    moreDigits(0, lessDecimals);
                    out.append(" | ");
                }
                range(0, max, decimalsLeft, true);
            } else {
                out.append("\"-\" (");
                range(-max, NO_MAX, decimalsLeft, false);
                out.append(')');
            }
            return;
        }
        throw new GrammarException("JSON schema conversion failed: at least one of minimum or maximum must be set");
    }
}
