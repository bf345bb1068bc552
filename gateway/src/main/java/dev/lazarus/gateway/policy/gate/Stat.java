package dev.lazarus.gateway.policy.gate;

import java.util.Collection;

/**
 * Mean and sample standard deviation of a few measurements.
 *
 * @param mean  average; NaN when there are none
 * @param stdev sample standard deviation (n - 1); 0 for one value, NaN for none
 * @param n     number of values
 */
public record Stat(double mean, double stdev, int n) {

    public static Stat of(Collection<Double> values) {
        int n = values.size();
        if (n == 0) {
            return new Stat(Double.NaN, Double.NaN, 0);
        }
        double mean = values.stream().mapToDouble(Double::doubleValue).sum() / n;
        if (n == 1) {
            return new Stat(mean, 0, 1);
        }
        double squares = values.stream().mapToDouble(v -> (v - mean) * (v - mean)).sum();
        return new Stat(mean, Math.sqrt(squares / (n - 1)), n);
    }
}
