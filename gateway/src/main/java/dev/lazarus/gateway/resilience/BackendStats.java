package dev.lazarus.gateway.resilience;

import java.time.Duration;

/**
 * One backend's live figures over the recent window, as the admin API shows them.
 *
 * @param window          how far back the figures look
 * @param calls           calls that finished in the window (client cancellations excluded)
 * @param failures        of those, the ones that count against the backend
 * @param errorRate       failures / calls, 0 when there were none
 * @param tokensPerSecond mean generation speed of the successful calls that were long enough to
 *                        judge, NaN when none was
 * @param ttftP50         median time to first token of the calls that produced one, null when none did
 * @param ttftP95         95th percentile of the same
 */
public record BackendStats(
        Duration window, int calls, int failures, double errorRate, double tokensPerSecond, Duration ttftP50,
        Duration ttftP95) {}
