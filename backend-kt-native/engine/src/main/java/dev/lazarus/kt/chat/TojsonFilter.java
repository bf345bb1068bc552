package dev.lazarus.kt.chat;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;
import java.util.Map;

/** {@code tojson} with Hugging Face semantics ({@code json.dumps}, optional {@code indent}); see {@link PythonJson}. */
final class TojsonFilter implements Filter {

    @Override
    public String getName() {
        return "tojson";
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
        return PythonJson.dumps(var, args.length > 0 && args[0] != null ? Integer.valueOf(args[0]) : null);
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
        Object indent = kwargs.containsKey("indent") ? kwargs.get("indent") : args.length > 0 ? args[0] : null;
        return PythonJson.dumps(var, indent == null ? null : Integer.valueOf(indent.toString()));
    }
}
