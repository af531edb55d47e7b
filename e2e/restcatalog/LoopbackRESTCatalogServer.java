import java.lang.reflect.Constructor;
import java.lang.reflect.Method;

import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

/**
 * The Iceberg project's REST catalog fixture (org.apache.iceberg.rest.RESTCatalogServer, as the
 * apache/iceberg-rest-fixture image runs it), bound to 127.0.0.1 only: the fixture's own main
 * listens on every address, and scand's tests keep their servers on loopback. The backend catalog
 * and the servlet are the fixture's own, configured the same way (CATALOG_* environment
 * variables: CATALOG_WAREHOUSE, CATALOG_REST_PORT). Run as a single-file program:
 *
 * <pre>java -cp '.tools/iceberg-rest/*' e2e/restcatalog/LoopbackRESTCatalogServer.java</pre>
 *
 * The fixture's backend and adapter are not public API, so they are reached by reflection.
 */
public class LoopbackRESTCatalogServer {
  public static void main(String[] args) throws Exception {
    Class<?> fixture = Class.forName("org.apache.iceberg.rest.RESTCatalogServer");
    Constructor<?> newFixture = fixture.getDeclaredConstructor();
    newFixture.setAccessible(true);
    Method init = fixture.getDeclaredMethod("initializeBackendCatalog");
    init.setAccessible(true);
    Object context = init.invoke(newFixture.newInstance());

    Class<?> adapterClass = Class.forName("org.apache.iceberg.rest.RESTServerCatalogAdapter");
    Constructor<?> newAdapter = adapterClass.getDeclaredConstructors()[0];
    newAdapter.setAccessible(true);
    Object adapter = newAdapter.newInstance(context);

    Class<?> servletClass = Class.forName("org.apache.iceberg.rest.RESTCatalogServlet");
    Constructor<?> newServlet = servletClass.getDeclaredConstructor(Class.forName("org.apache.iceberg.rest.RESTCatalogAdapter"));
    newServlet.setAccessible(true);
    jakarta.servlet.Servlet servlet = (jakarta.servlet.Servlet) newServlet.newInstance(adapter);

    ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    handler.addServlet(new ServletHolder(servlet), "/*");
    handler.insertHandler(new GzipHandler());

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(Integer.parseInt(System.getenv("CATALOG_REST_PORT")));
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
    server.join();
  }
}
