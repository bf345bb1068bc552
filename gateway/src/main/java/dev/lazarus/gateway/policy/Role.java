package dev.lazarus.gateway.policy;

/** What a backend is to the rollback policy. */
public enum Role {
    /** Proven and always warm (llama.cpp): the fallback a promoted candidate pivots back to. */
    ORACLE,
    /** Faster and riskier: serves only after preflight and the decision gate, and is rolled back on trouble. */
    CANDIDATE
}
