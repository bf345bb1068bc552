package dev.lazarus.kt.chat;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class JinjaCompatTest {

    @Test
    void parenthesisesNegatedTests() {
        assertThat(JinjaCompat.rewrite("{% if not tools is defined %}x{% endif %}"))
                .isEqualTo("{% if not (tools is defined) %}x{% endif %}");
        assertThat(JinjaCompat.rewrite("{%- if not message['content'] is not none -%}"))
                .isEqualTo("{%- if not (message['content'] is not none) -%}");
    }

    @Test
    void notBindsLooserThanComparisonsAndFiltersButTighterThanAndOr() {
        assertThat(JinjaCompat.rewrite("{%- if not message.tool_calls|length == 1 %}"))
                .isEqualTo("{%- if not (message.tool_calls|length == 1) %}");
        assertThat(JinjaCompat.rewrite("{% if a and not b.c or not(d and e) %}"))
                .isEqualTo("{% if a and not (b.c) or not ((d and e)) %}");
        assertThat(JinjaCompat.rewrite("{{ x if not y else z }}")).isEqualTo("{{ x if not (y) else z }}");
        assertThat(JinjaCompat.rewrite("{% if 'a' not in x and y is not none %}"))
                .isEqualTo("{% if 'a' not in x and y is not none %}");
        assertThat(JinjaCompat.rewrite("{% if f(not a, b) %}")).isEqualTo("{% if f(not (a), b) %}");
    }

    @Test
    void parenthesisesFilteredKeywordArgumentsOnly() {
        assertThat(JinjaCompat.rewrite("{%- set ns = namespace(a=true, last=messages|length - 1) %}"))
                .isEqualTo("{%- set ns = namespace(a=true, last=(messages|length - 1)) %}");
        assertThat(JinjaCompat.rewrite("{{ x | tojson(indent=4) }}")).isEqualTo("{{ x | tojson(indent=4) }}");
        assertThat(JinjaCompat.rewrite("{% if (a == b|length) %}")).isEqualTo("{% if (a == b|length) %}");
    }

    @Test
    void turnsReverseSlicesIntoTheReverseFilterButLeavesTextAlone() {
        assertThat(JinjaCompat.rewrite("not x is defined {% for m in messages[::-1] %}"))
                .isEqualTo("not x is defined {% for m in messages|reverse %}");
    }
}
