package dev.lazarus.gateway.config;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/** The connection pools of the stores kept in PostgreSQL. */
public final class PostgresPools {

    private PostgresPools() {
    }

    /** A pool named {@code name} (as its metrics and threads show it) of at most {@code size} connections. */
    public static HikariDataSource open(String url, String username, String password, int size, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(username);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setPoolName(name);
        // A store that is away must fail a request or an admin call within seconds, not hold it for 30 s.
        config.setConnectionTimeout(2_000);
        config.addDataSourceProperty("connectTimeout", "2");
        config.addDataSourceProperty("socketTimeout", "10");
        return new HikariDataSource(config);
    }
}
