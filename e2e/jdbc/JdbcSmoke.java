import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * The Arrow Flight SQL JDBC driver against scand, for e2e/test_flightsql.py.
 * Usage: JdbcSmoke SQL URL... (credentials in the URLs: token=..., or
 * user=...&password=...). For each URL it prints "== i", then one item a
 * line:
 * "tables: <catalog.schema.table,...>", "columns: <name:type,...>" of the
 * first table, then the statement's column names and its rows
 * (tab-separated, NULL for null) as a prepared statement returns them, and
 * "count: N" from a plain Statement's COUNT(*) of the SQL's source. An
 * SQLException (or the driver's unchecked exception) prints "error: <SQLState
 * or class>: <message>" and goes on with the
 * next URL; the exit status is 3 if any failed.
 */
public final class JdbcSmoke {
    public static void main(String[] args) throws Exception {
        String sql = args[0];
        int status = 0;
        for (int i = 1; i < args.length; i++) {
            System.out.println("== " + i);
            if (!run(args[i], sql)) status = 3;
        }
        System.exit(status);
    }

    private static boolean run(String url, String sql) {
        try (Connection conn = DriverManager.getConnection(url, new Properties())) {
            DatabaseMetaData md = conn.getMetaData();
            StringBuilder tables = new StringBuilder();
            String first = null;
            try (ResultSet rs = md.getTables(null, null, "%", null)) {
                while (rs.next()) {
                    if (tables.length() > 0) tables.append(',');
                    tables.append(rs.getString("TABLE_CAT")).append('.').append(rs.getString("TABLE_SCHEM"))
                          .append('.').append(rs.getString("TABLE_NAME"));
                    if (first == null) first = rs.getString("TABLE_NAME");
                }
            }
            System.out.println("tables: " + tables);
            StringBuilder cols = new StringBuilder();
            if (first != null) {
                try (ResultSet rs = md.getColumns(null, null, first, "%")) {
                    while (rs.next()) {
                        if (cols.length() > 0) cols.append(',');
                        cols.append(rs.getString("COLUMN_NAME")).append(':').append(rs.getString("TYPE_NAME"));
                    }
                }
            }
            System.out.println("columns: " + cols);
            try (PreparedStatement ps = conn.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData rmd = rs.getMetaData();
                StringBuilder head = new StringBuilder();
                for (int i = 1; i <= rmd.getColumnCount(); i++) {
                    if (i > 1) head.append('\t');
                    head.append(rmd.getColumnName(i));
                }
                System.out.println(head);
                while (rs.next()) {
                    StringBuilder row = new StringBuilder();
                    for (int i = 1; i <= rmd.getColumnCount(); i++) {
                        if (i > 1) row.append('\t');
                        String v = rs.getString(i);
                        row.append(v == null ? "NULL" : v);
                    }
                    System.out.println(row);
                }
            }
            int from = sql.toUpperCase().indexOf(" FROM ");
            if (from >= 0) {
                String source = sql.substring(from + 6).trim().split("\\s+")[0];
                try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + source)) {
                    rs.next();
                    System.out.println("count: " + rs.getLong(1));
                }
            }
        } catch (SQLException | RuntimeException e) {
            // The driver reports some call failures unchecked.
            String state = e instanceof SQLException ? ((SQLException) e).getSQLState() : e.getClass().getSimpleName();
            System.out.println("error: " + state + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            return false;
        }
        return true;
    }
}
