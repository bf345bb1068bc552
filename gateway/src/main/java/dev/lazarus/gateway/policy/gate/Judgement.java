package dev.lazarus.gateway.policy.gate;

/**
 * One rule's answer.
 *
 * @param reason the figures, the threshold and the rule that applied
 */
record Judgement(Verdict verdict, String reason) {}
