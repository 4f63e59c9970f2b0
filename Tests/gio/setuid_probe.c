/* A GLib program for GIOHostileServerTests' set-uid test: loads the GIO modules in the
 * directory given (.build/gio: libgioreachd.so), asks g_network_monitor_get_default() and
 * prints one JSON line: which monitor GLib chose, whether the module was there to choose, and
 * the ids it ran with. A set-uid or set-gid copy of it must not let REACHD_SOCKET or
 * XDG_RUNTIME_DIR choose the socket. The module is loaded here, not by GIO_EXTRA_MODULES, so
 * that it is there whatever GLib makes of the environment of a set-uid program. Built by
 * `make gio` into .build/gio-tests/setuid-probe.
 *
 * Usage: setuid-probe MODULE_DIRECTORY */

#include <stdio.h>
#include <unistd.h>

#include <gio/gio.h>

int
main (int argc, char **argv)
{
  GList *modules;
  GIOExtensionPoint *point;
  GNetworkMonitor *monitor;

  if (argc != 2)
    {
      fprintf (stderr, "usage: %s MODULE_DIRECTORY\n", argv[0]);
      return 2;
    }
  /* Any default object makes GIO register its extension points, which a module implements. */
  g_proxy_resolver_get_default ();
  modules = g_io_modules_load_all_in_directory (argv[1]);
  point = g_io_extension_point_lookup (G_NETWORK_MONITOR_EXTENSION_POINT_NAME);
  monitor = g_network_monitor_get_default ();
  printf ("{\"type\": \"%s\", \"modules\": %u, \"reachdLoaded\": %s, \"uid\": %u, \"euid\": %u, \"gid\": %u, "
          "\"egid\": %u}\n",
          G_OBJECT_TYPE_NAME (monitor), g_list_length (modules),
          g_io_extension_point_get_extension_by_name (point, "reachd") != NULL ? "true" : "false",
          (guint) getuid (), (guint) geteuid (), (guint) getgid (), (guint) getegid ());
  return 0;
}
