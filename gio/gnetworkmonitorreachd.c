/* libgioreachd: a GNetworkMonitor for GLib/GIO that asks reachd.
 *
 * Implements the "gio-network-monitor" extension point as "reachd", priority 35: above
 * NetworkManager's (30) and netlink's (20), below the portal's (40), so that a sandboxed app
 * keeps using the portal and the portal's host side uses reachd.
 *
 * One varlink connection per process: io.reachd.Reachability.Subscribe with "more", read with
 * GLib's own non-blocking I/O on the main context that was the thread-default where the monitor
 * was created; network-changed and the property notifications are emitted there. Init waits for
 * reachd's first reply at most INIT_TIMEOUT_US and fails otherwise, so that GLib uses the next
 * implementation. When reachd goes away the last answers stay (stale) while the module
 * reconnects with a growing delay and resumes by sequence number; can_reach asks reachd's Check
 * on a connection of its own.
 *
 * The mapping (docs/glib.md):
 *   not reachable                          LOCAL, network-available FALSE
 *   reachable, connectivity none/limited   LIMITED
 *   reachable, connectivity portal         PORTAL
 *   reachable, connectivity full/unknown   FULL
 *   network-metered                        Status.expensive
 */

#define G_LOG_DOMAIN "GLib-GIO-reachd"

#include <string.h>

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <json-glib/json-glib.h>

#define REACHD_INTERFACE "io.reachd.Reachability"
#define REACHD_SYSTEM_SOCKET "/run/reachd/" REACHD_INTERFACE
/* GLib gives up on an implementation whose init fails; ours must fail within 100 ms. */
#define INIT_TIMEOUT_US (90 * G_TIME_SPAN_MILLISECOND)
#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 5000
/* reachd's largest message is a Status with every interface: far below this. */
#define MAX_MESSAGE_BYTES (8 * 1024 * 1024)
/* can_reach: reachd's Check resolves names; give it the time reachctl gives it. */
#define CHECK_TIMEOUT_S 30
/* Only the Status fields the mapping or the path reads make an event worth a wake-up. */
#define SUBSCRIBE_CHANGES "[\"connectivity\",\"expensive\",\"gateways\",\"primary\",\"reachable\",\"vpn\"]"

#define G_TYPE_NETWORK_MONITOR_REACHD (g_network_monitor_reachd_get_type ())
G_DECLARE_FINAL_TYPE (GNetworkMonitorReachd, g_network_monitor_reachd, G, NETWORK_MONITOR_REACHD, GObject)

enum
{
  PROP_0,
  PROP_NETWORK_AVAILABLE,
  PROP_NETWORK_METERED,
  PROP_CONNECTIVITY
};

/* What an app sees, and the path it is on (primary interface, VPN, gateways). */
typedef struct
{
  gboolean available;
  gboolean metered;
  GNetworkConnectivity connectivity;
  gchar *path;
} ReachdState;

struct _GNetworkMonitorReachd
{
  GObject parent_instance;

  GMainContext *context;   /* where the monitor was created: every source and signal is here */
  ReachdState state;
  gboolean initializing;   /* no signals for the first answer */

  GSocket *socket;         /* the subscription; NULL between connections */
  GSource *io_source;      /* G_IO_OUT while connecting/sending, G_IO_IN while subscribed */
  GSource *retry_source;
  GByteArray *inbuf;       /* bytes of the message being received */
  gchar *request;          /* the Subscribe call being sent, with its NUL */
  gsize request_length;
  gsize request_sent;
  gint64 sequence;         /* last event seen; resume after it */
  gboolean have_sequence;
  gboolean answered;       /* this connection has delivered a reply */
  guint retry_ms;
};

static void g_network_monitor_reachd_iface_init (GNetworkMonitorInterface *iface);
static void g_network_monitor_reachd_initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (GNetworkMonitorReachd, g_network_monitor_reachd, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                /* GInitable first: GNetworkMonitor requires it. */
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               g_network_monitor_reachd_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_NETWORK_MONITOR,
                                                               g_network_monitor_reachd_iface_init))

static void start_connection (GNetworkMonitorReachd *self);

/* --- Where reachd listens: as reachctl finds it ---------------------------------------------- */

static gchar *
resolve_socket_path (void)
{
  const gchar *explicit = g_getenv ("REACHD_SOCKET");
  const gchar *runtime = g_getenv ("XDG_RUNTIME_DIR");
  gchar *user;

  if (explicit != NULL && explicit[0] != '\0')
    return g_strdup (explicit);
  if (g_file_test (REACHD_SYSTEM_SOCKET, G_FILE_TEST_EXISTS))
    return g_strdup (REACHD_SYSTEM_SOCKET);
  if (runtime != NULL && runtime[0] != '\0')
    {
      user = g_build_filename (runtime, "reachd", REACHD_INTERFACE, NULL);
      if (g_file_test (user, G_FILE_TEST_EXISTS))
        return user;
      g_free (user);
    }
  return g_strdup (REACHD_SYSTEM_SOCKET);
}

/* --- Status → what GLib apps see --------------------------------------------------------------- */

static const gchar *
member_string (JsonObject *object, const gchar *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static gboolean
member_boolean (JsonObject *object, const gchar *name)
{
  JsonNode *node = json_object_get_member (object, name);

  return node != NULL && JSON_NODE_TYPE (node) == JSON_NODE_VALUE &&
         json_node_get_value_type (node) == G_TYPE_BOOLEAN && json_node_get_boolean (node);
}

static JsonObject *
member_object (JsonObject *object, const gchar *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static gboolean
state_from_status (JsonObject *status, ReachdState *state)
{
  const gchar *connectivity = member_string (status, "connectivity");
  JsonNode *gateways = json_object_get_member (status, "gateways");
  GString *path;

  if (connectivity == NULL || !json_object_has_member (status, "reachable"))
    return FALSE;
  state->available = member_boolean (status, "reachable");
  state->metered = member_boolean (status, "expensive");
  if (!state->available)
    state->connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
  else if (g_str_equal (connectivity, "none") || g_str_equal (connectivity, "limited"))
    state->connectivity = G_NETWORK_CONNECTIVITY_LIMITED;
  else if (g_str_equal (connectivity, "portal"))
    state->connectivity = G_NETWORK_CONNECTIVITY_PORTAL;
  else
    state->connectivity = G_NETWORK_CONNECTIVITY_FULL;   /* full, or unknown: not checked (yet) */

  /* The path: a new primary interface, VPN or gateway is a network change, as a new default
   * route is to GLib's own backends. */
  path = g_string_new (NULL);
  g_string_append_printf (path, "%s|%s|", member_string (member_object (status, "primary"), "name") ?: "",
                          member_string (member_object (status, "vpn"), "name") ?: "");
  if (gateways != NULL && JSON_NODE_HOLDS_ARRAY (gateways))
    {
      JsonArray *array = json_node_get_array (gateways);
      guint i;

      for (i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *gateway = json_array_get_element (array, i);

          if (JSON_NODE_TYPE (gateway) == JSON_NODE_VALUE && json_node_get_value_type (gateway) == G_TYPE_STRING)
            g_string_append_printf (path, "%s,", json_node_get_string (gateway));
        }
    }
  state->path = g_string_free (path, FALSE);
  return TRUE;
}

/* Takes the new state; notifies each property that changed and emits network-changed when
 * anything did (on the monitor's context: every caller runs there). */
static void
apply_state (GNetworkMonitorReachd *self, ReachdState *next)
{
  ReachdState previous = self->state;
  gboolean changed;

  self->state = *next;
  next->path = NULL;
  if (self->initializing)
    {
      g_free (previous.path);
      return;
    }
  changed = previous.available != self->state.available || previous.metered != self->state.metered ||
            previous.connectivity != self->state.connectivity || g_strcmp0 (previous.path, self->state.path) != 0;
  g_free (previous.path);
  if (!changed)
    return;

  g_object_ref (self);
  g_object_freeze_notify (G_OBJECT (self));
  if (previous.available != self->state.available)
    g_object_notify (G_OBJECT (self), "network-available");
  if (previous.metered != self->state.metered)
    g_object_notify (G_OBJECT (self), "network-metered");
  if (previous.connectivity != self->state.connectivity)
    g_object_notify (G_OBJECT (self), "connectivity");
  g_object_thaw_notify (G_OBJECT (self));
  g_debug ("network-changed: available %d, metered %d, connectivity %d, path %s", self->state.available,
           self->state.metered, self->state.connectivity, self->state.path);
  g_signal_emit_by_name (self, "network-changed", self->state.available);
  g_object_unref (self);
}

/* One reply of the subscription. FALSE with an error: the connection is to be dropped. */
static gboolean
handle_reply (GNetworkMonitorReachd *self, const gchar *data, gsize length, GError **error)
{
  JsonParser *parser = json_parser_new_immutable ();
  JsonObject *root, *event, *current;
  JsonNode *sequence;
  const gchar *failure;
  ReachdState next = { 0 };
  gboolean ok = FALSE;

  if (!json_parser_load_from_data (parser, data, (gssize) length, error))
    goto out;
  root = JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)) ? json_node_get_object (json_parser_get_root (parser)) : NULL;
  if ((failure = member_string (root, "error")) != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "reachd answered %s", failure);
      goto out;
    }
  event = member_object (member_object (root, "parameters"), "event");
  current = member_object (event, "current");
  sequence = event != NULL ? json_object_get_member (event, "sequence") : NULL;
  if (current == NULL || sequence == NULL || json_node_get_value_type (sequence) != G_TYPE_INT64 ||
      !state_from_status (current, &next))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reachd sent a reply that is no event");
      goto out;
    }
  if (!self->answered && !self->initializing)
    g_debug ("reachd: subscribed again (after %" G_GINT64_FORMAT ")", self->sequence);
  self->sequence = json_node_get_int (sequence);
  self->have_sequence = TRUE;
  self->answered = TRUE;
  self->retry_ms = RETRY_MIN_MS;
  apply_state (self, &next);
  ok = TRUE;

out:
  g_object_unref (parser);
  return ok;
}

/* Every complete message in inbuf (each ends with a NUL), in order. */
static gboolean
handle_buffered (GNetworkMonitorReachd *self, GError **error)
{
  guint8 *end;

  while (self->inbuf->len > 0 && (end = memchr (self->inbuf->data, '\0', self->inbuf->len)) != NULL)
    {
      gsize length = (gsize) (end - self->inbuf->data);
      gboolean ok = handle_reply (self, (const gchar *) self->inbuf->data, length, error);

      g_byte_array_remove_range (self->inbuf, 0, (guint) length + 1);
      if (!ok)
        return FALSE;
    }
  if (self->inbuf->len > MAX_MESSAGE_BYTES)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE, "reply from reachd too large");
      return FALSE;
    }
  return TRUE;
}

/* --- The subscription's connection ------------------------------------------------------------ */

static void
build_request (GNetworkMonitorReachd *self)
{
  gchar *after = self->have_sequence ? g_strdup_printf ("\"after\":%" G_GINT64_FORMAT ",", self->sequence) : g_strdup ("");

  g_free (self->request);
  /* The NUL that g_strdup_printf ends the string with is varlink's message end. */
  self->request = g_strdup_printf ("{\"method\":\"" REACHD_INTERFACE ".Subscribe\",\"parameters\":{%s\"changes\":"
                                   SUBSCRIBE_CHANGES "},\"more\":true}", after);
  self->request_length = strlen (self->request) + 1;
  self->request_sent = 0;
  g_free (after);
}

static void
drop_connection (GNetworkMonitorReachd *self)
{
  if (self->io_source != NULL)
    {
      g_source_destroy (self->io_source);
      g_clear_pointer (&self->io_source, g_source_unref);
    }
  if (self->socket != NULL)
    {
      g_socket_close (self->socket, NULL);
      g_clear_object (&self->socket);
    }
  g_byte_array_set_size (self->inbuf, 0);
  self->answered = FALSE;
}

static gboolean
retry_cb (gpointer user_data)
{
  GNetworkMonitorReachd *self = user_data;

  g_clear_pointer (&self->retry_source, g_source_unref);
  start_connection (self);
  return G_SOURCE_REMOVE;
}

/* reachd is gone (or misbehaved): keep the last answers and try again later, each time later
 * up to RETRY_MAX_MS, so a missing reachd costs a wake-up every few seconds, no more. */
static void
schedule_retry (GNetworkMonitorReachd *self, const GError *why)
{
  drop_connection (self);
  g_debug ("reachd: %s; trying again in %u ms", why != NULL ? why->message : "connection closed", self->retry_ms);
  self->retry_source = g_timeout_source_new (self->retry_ms);
  g_source_set_callback (self->retry_source, retry_cb, self, NULL);
  g_source_attach (self->retry_source, self->context);
  self->retry_ms = MIN (self->retry_ms * 2, RETRY_MAX_MS);
}

static void watch (GNetworkMonitorReachd *self, GIOCondition condition);

static gboolean
socket_cb (GSocket *socket, GIOCondition condition, gpointer user_data)
{
  GNetworkMonitorReachd *self = user_data;
  GError *error = NULL;
  guint8 buffer[16384];
  gssize n;

  (void) condition;   /* read or write until it would block, whatever woke us */
  if (self->request_sent < self->request_length)
    {
      /* Connecting, then sending the Subscribe call. */
      if (self->request_sent == 0 && !g_socket_check_connect_result (socket, &error))
        goto failed;
      while (self->request_sent < self->request_length)
        {
          n = g_socket_send (socket, self->request + self->request_sent, self->request_length - self->request_sent, NULL, &error);
          if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            {
              g_clear_error (&error);
              return G_SOURCE_CONTINUE;
            }
          if (n < 0)
            goto failed;
          self->request_sent += (gsize) n;
        }
      watch (self, G_IO_IN);
      return G_SOURCE_REMOVE;
    }

  for (;;)
    {
      n = g_socket_receive (socket, (gchar *) buffer, sizeof buffer, NULL, &error);
      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          g_clear_error (&error);
          return G_SOURCE_CONTINUE;
        }
      if (n < 0)
        goto failed;
      if (n == 0)
        {
          g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "reachd closed the connection");
          goto failed;
        }
      g_byte_array_append (self->inbuf, buffer, (guint) n);
      if (!handle_buffered (self, &error))
        goto failed;
      if ((gsize) n < sizeof buffer)
        return G_SOURCE_CONTINUE;
    }

failed:
  /* schedule_retry destroys this source; returning REMOVE as well is harmless. */
  schedule_retry (self, error);
  g_clear_error (&error);
  return G_SOURCE_REMOVE;
}

static void
watch (GNetworkMonitorReachd *self, GIOCondition condition)
{
  if (self->io_source != NULL)
    {
      g_source_destroy (self->io_source);
      g_source_unref (self->io_source);
    }
  self->io_source = g_socket_create_source (self->socket, condition | G_IO_HUP | G_IO_ERR, NULL);
  g_source_set_callback (self->io_source, G_SOURCE_FUNC (socket_cb), self, NULL);
  g_source_attach (self->io_source, self->context);
}

/* Creates the socket and starts a non-blocking connect. FALSE with an error when it failed at
 * once (no socket file, refused). */
static gboolean
open_socket (GNetworkMonitorReachd *self, GError **error)
{
  gchar *path = resolve_socket_path ();
  GSocketAddress *address = g_unix_socket_address_new (path);
  gboolean ok = FALSE;
  GError *local = NULL;

  g_free (path);
  self->socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, error);
  if (self->socket == NULL)
    goto out;
  g_socket_set_blocking (self->socket, FALSE);
  build_request (self);
  if (!g_socket_connect (self->socket, address, NULL, &local) && !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_PENDING))
    {
      g_propagate_error (error, local);
      g_clear_object (&self->socket);
      goto out;
    }
  g_clear_error (&local);
  ok = TRUE;

out:
  g_object_unref (address);
  return ok;
}

/* A new subscription, entirely on the monitor's context (after init). */
static void
start_connection (GNetworkMonitorReachd *self)
{
  GError *error = NULL;

  if (!open_socket (self, &error))
    {
      schedule_retry (self, error);
      g_error_free (error);
      return;
    }
  watch (self, G_IO_OUT);
}

/* --- GInitable: the first answer, or failure within INIT_TIMEOUT_US --------------------------- */

static gboolean
wait_for (GSocket *socket, GIOCondition condition, gint64 deadline, GCancellable *cancellable, GError **error)
{
  gint64 left = deadline - g_get_monotonic_time ();

  if (left <= 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "reachd did not answer in time");
      return FALSE;
    }
  return g_socket_condition_timed_wait (socket, condition, left, cancellable, error);
}

static gboolean
g_network_monitor_reachd_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  GNetworkMonitorReachd *self = G_NETWORK_MONITOR_REACHD (initable);
  gint64 deadline = g_get_monotonic_time () + INIT_TIMEOUT_US;
  guint8 buffer[16384];
  gssize n;

  if (!open_socket (self, error))
    return FALSE;
  if (!wait_for (self->socket, G_IO_OUT, deadline, cancellable, error) ||
      !g_socket_check_connect_result (self->socket, error))
    goto failed;
  while (self->request_sent < self->request_length)
    {
      if (!wait_for (self->socket, G_IO_OUT, deadline, cancellable, error))
        goto failed;
      n = g_socket_send (self->socket, self->request + self->request_sent, self->request_length - self->request_sent, NULL, error);
      if (n < 0)
        goto failed;
      self->request_sent += (gsize) n;
    }
  while (!self->answered)
    {
      if (!wait_for (self->socket, G_IO_IN, deadline, cancellable, error))
        goto failed;
      n = g_socket_receive (self->socket, (gchar *) buffer, sizeof buffer, NULL, error);
      if (n < 0)
        goto failed;
      if (n == 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "reachd closed the connection");
          goto failed;
        }
      g_byte_array_append (self->inbuf, buffer, (guint) n);
      if (!handle_buffered (self, error))
        goto failed;
    }
  self->initializing = FALSE;
  watch (self, G_IO_IN);
  g_debug ("reachd: subscribed (sequence %" G_GINT64_FORMAT ")", self->sequence);
  return TRUE;

failed:
  g_debug ("reachd: not used: %s", error != NULL && *error != NULL ? (*error)->message : "?");
  drop_connection (self);
  return FALSE;
}

static void
g_network_monitor_reachd_initable_iface_init (GInitableIface *iface)
{
  iface->init = g_network_monitor_reachd_initable_init;
}

/* --- can_reach: reachd's Check ----------------------------------------------------------------- */

typedef struct
{
  gchar *request;
  GSocketConnection *connection;
  GDataInputStream *input;
  guint attempts;        /* Checks sent; reachd may answer Busy, and is asked again */
} CheckData;

/* reachd limits the look-ups in flight per user: asked again after the time it names, a few
 * times, then answered from the last status. */
#define CHECK_ATTEMPTS 4
#define CHECK_RETRY_MAX_MS 2000

static void check_start (GTask *task);

static void
check_data_free (gpointer data)
{
  CheckData *check = data;

  g_free (check->request);
  g_clear_object (&check->input);
  g_clear_object (&check->connection);
  g_free (check);
}

/* reachd cannot be asked: answer from the last status, as GLib's own monitors answer from the
 * routes they know. */
static void
return_from_state (GTask *task)
{
  GNetworkMonitorReachd *self = g_task_get_source_object (task);

  if (self->state.available)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "Network unreachable");
  g_object_unref (task);
}

/* A step of a Check failed. A cancellation ends the task with it; anything else (a read error,
 * reachd hung up or is not there) answers from the state the module has. Takes `error` (which
 * may be NULL: reachd closed the connection without an answer). */
static void
check_step_failed (GTask *task, GError *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  g_debug ("reachd: Check: %s", error != NULL ? error->message : "reachd closed the connection");
  g_clear_error (&error);
  return_from_state (task);
}

static gboolean
check_retry_cb (gpointer user_data)
{
  check_start (user_data);
  return G_SOURCE_REMOVE;
}

static void
check_read_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  GNetworkMonitorReachd *self = g_task_get_source_object (task);
  GError *error = NULL;
  gsize length = 0;
  gchar *reply = g_data_input_stream_read_upto_finish (G_DATA_INPUT_STREAM (source), result, &length, &error);
  JsonParser *parser;
  JsonObject *root, *check;
  const gchar *failure;

  if (reply == NULL)
    {
      check_step_failed (task, error);
      return;
    }
  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, reply, (gssize) length, &error))
    {
      g_task_return_error (task, error);
      goto out;
    }
  root = JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)) ? json_node_get_object (json_parser_get_root (parser)) : NULL;
  if ((failure = member_string (root, "error")) != NULL)
    {
      if (g_str_equal (failure, REACHD_INTERFACE ".HostNotFound"))
        g_task_return_new_error (task, G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND, "Host not found");
      else if (g_str_equal (failure, REACHD_INTERFACE ".Busy"))
        {
          CheckData *data = g_task_get_task_data (task);
          JsonObject *parameters = member_object (root, "parameters");
          JsonNode *after = parameters != NULL ? json_object_get_member (parameters, "retryAfterMs") : NULL;
          gint64 delay = after != NULL && json_node_get_value_type (after) == G_TYPE_INT64 ? json_node_get_int (after) : 100;
          GSource *retry;

          if (data->attempts >= CHECK_ATTEMPTS)
            {
              g_debug ("reachd: Check: busy %u times", data->attempts);
              g_object_unref (parser);
              g_free (reply);
              return_from_state (task);
              return;
            }
          g_clear_object (&data->input);
          g_clear_object (&data->connection);
          retry = g_timeout_source_new ((guint) CLAMP (delay, 1, CHECK_RETRY_MAX_MS));
          g_source_set_callback (retry, (GSourceFunc) check_retry_cb, task, NULL);
          g_source_attach (retry, g_task_get_context (task));
          g_source_unref (retry);
          g_object_unref (parser);
          g_free (reply);
          return;   /* the task goes on */
        }
      else
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "reachd answered %s", failure);
      goto out;
    }
  check = member_object (member_object (root, "parameters"), "result");
  if (check == NULL)
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reachd sent a reply that is no check");
  else if (member_boolean (check, "reachable"))
    g_task_return_boolean (task, TRUE);
  else if (!self->state.available)
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "Network unreachable");
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE, "Host unreachable");

out:
  g_object_unref (parser);
  g_free (reply);
  g_object_unref (task);
}

static void
check_written_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  CheckData *check = g_task_get_task_data (task);
  GError *error = NULL;

  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error))
    {
      check_step_failed (task, error);
      return;
    }
  check->input = g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (check->connection)));
  g_data_input_stream_read_upto_async (check->input, "", 1, G_PRIORITY_DEFAULT, g_task_get_cancellable (task),
                                       check_read_cb, task);
}

static void
check_connected_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  CheckData *check = g_task_get_task_data (task);
  GError *error = NULL;

  check->connection = g_socket_client_connect_finish (G_SOCKET_CLIENT (source), result, &error);
  if (check->connection == NULL)
    {
      check_step_failed (task, error);
      return;
    }
  /* The NUL that ends the string ends the varlink message. */
  g_output_stream_write_all_async (g_io_stream_get_output_stream (G_IO_STREAM (check->connection)), check->request,
                                   strlen (check->request) + 1, G_PRIORITY_DEFAULT, g_task_get_cancellable (task),
                                   check_written_cb, task);
}

/* The host and port reachd's Check is to look up, from what the app passed. */
static gboolean
connectable_host (GSocketConnectable *connectable, gchar **host, guint *port, GError **error)
{
  if (G_IS_NETWORK_ADDRESS (connectable))
    {
      *host = g_strdup (g_network_address_get_hostname (G_NETWORK_ADDRESS (connectable)));
      *port = g_network_address_get_port (G_NETWORK_ADDRESS (connectable));
    }
  else if (G_IS_INET_SOCKET_ADDRESS (connectable))
    {
      *host = g_inet_address_to_string (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (connectable)));
      *port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (connectable));
    }
  else if (G_IS_NETWORK_SERVICE (connectable))
    {
      *host = g_strdup (g_network_service_get_domain (G_NETWORK_SERVICE (connectable)));
      *port = 0;
    }
  else
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "reachd cannot check a %s",
                   G_OBJECT_TYPE_NAME (connectable));
      return FALSE;
    }
  return TRUE;
}

/* Connects to reachd and sends the Check; the callbacks above take it from there. */
static void
check_start (GTask *task)
{
  CheckData *check = g_task_get_task_data (task);
  GSocketClient *client = g_socket_client_new ();
  gchar *path = resolve_socket_path ();
  GSocketAddress *address = g_unix_socket_address_new (path);

  check->attempts++;
  g_socket_client_set_timeout (client, CHECK_TIMEOUT_S);
  g_socket_client_connect_async (client, G_SOCKET_CONNECTABLE (address), g_task_get_cancellable (task),
                                 check_connected_cb, task);
  g_object_unref (address);
  g_object_unref (client);
  g_free (path);
}

static void
g_network_monitor_reachd_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                          GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);
  CheckData *check = g_new0 (CheckData, 1);
  JsonBuilder *builder;
  JsonGenerator *generator;
  JsonNode *root;
  GError *error = NULL;
  gchar *host = NULL;
  guint port = 0;

  g_task_set_source_tag (task, g_network_monitor_reachd_can_reach_async);
  g_task_set_task_data (task, check, check_data_free);
  if (!connectable_host (connectable, &host, &port, &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, REACHD_INTERFACE ".Check");
  json_builder_set_member_name (builder, "parameters");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, host);
  if (port != 0)
    {
      json_builder_set_member_name (builder, "port");
      json_builder_add_int_value (builder, port);
    }
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  generator = json_generator_new ();
  json_generator_set_root (generator, root);
  check->request = json_generator_to_data (generator, NULL);
  json_node_unref (root);
  g_object_unref (generator);
  g_object_unref (builder);
  g_free (host);

  check_start (task);
}

static gboolean
g_network_monitor_reachd_can_reach_finish (GNetworkMonitor *monitor, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, monitor), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
sync_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
  (void) source;
}

/* The synchronous call blocks its caller, as GLib's own do (they resolve the name); it runs the
 * asynchronous one on a private context, so it never touches the app's. */
static gboolean
g_network_monitor_reachd_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                    GCancellable *cancellable, GError **error)
{
  GMainContext *context = g_main_context_new ();
  GAsyncResult *result = NULL;
  gboolean reachable;

  g_main_context_push_thread_default (context);
  g_network_monitor_reachd_can_reach_async (monitor, connectable, cancellable, sync_done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);
  reachable = g_network_monitor_reachd_can_reach_finish (monitor, result, error);
  g_main_context_pop_thread_default (context);
  g_object_unref (result);
  g_main_context_unref (context);
  return reachable;
}

static void
g_network_monitor_reachd_iface_init (GNetworkMonitorInterface *iface)
{
  iface->can_reach = g_network_monitor_reachd_can_reach;
  iface->can_reach_async = g_network_monitor_reachd_can_reach_async;
  iface->can_reach_finish = g_network_monitor_reachd_can_reach_finish;
}

/* --- GObject ----------------------------------------------------------------------------------- */

static void
g_network_monitor_reachd_init (GNetworkMonitorReachd *self)
{
  self->context = g_main_context_ref_thread_default ();
  self->inbuf = g_byte_array_new ();
  self->retry_ms = RETRY_MIN_MS;
  self->initializing = TRUE;
  self->state.available = FALSE;
  self->state.connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
}

static void
g_network_monitor_reachd_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GNetworkMonitorReachd *self = G_NETWORK_MONITOR_REACHD (object);

  switch (prop_id)
    {
    case PROP_NETWORK_AVAILABLE:
      g_value_set_boolean (value, self->state.available);
      break;
    case PROP_NETWORK_METERED:
      g_value_set_boolean (value, self->state.metered);
      break;
    case PROP_CONNECTIVITY:
      g_value_set_enum (value, self->state.connectivity);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
    }
}

static void
g_network_monitor_reachd_finalize (GObject *object)
{
  GNetworkMonitorReachd *self = G_NETWORK_MONITOR_REACHD (object);

  drop_connection (self);
  if (self->retry_source != NULL)
    {
      g_source_destroy (self->retry_source);
      g_source_unref (self->retry_source);
    }
  g_byte_array_unref (self->inbuf);
  g_free (self->request);
  g_free (self->state.path);
  g_main_context_unref (self->context);
  G_OBJECT_CLASS (g_network_monitor_reachd_parent_class)->finalize (object);
}

static void
g_network_monitor_reachd_class_init (GNetworkMonitorReachdClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = g_network_monitor_reachd_get_property;
  object_class->finalize = g_network_monitor_reachd_finalize;
  g_object_class_override_property (object_class, PROP_NETWORK_AVAILABLE, "network-available");
  g_object_class_override_property (object_class, PROP_NETWORK_METERED, "network-metered");
  g_object_class_override_property (object_class, PROP_CONNECTIVITY, "connectivity");
}

static void
g_network_monitor_reachd_class_finalize (GNetworkMonitorReachdClass *klass)
{
  (void) klass;
}

/* --- The module -------------------------------------------------------------------------------- */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  g_network_monitor_reachd_register_type (G_TYPE_MODULE (module));
  g_io_extension_point_implement (G_NETWORK_MONITOR_EXTENSION_POINT_NAME, G_TYPE_NETWORK_MONITOR_REACHD, "reachd", 35);
  /* Stay loaded: sources of the default monitor point into this library for the life of the
   * process, and GLib must not unload it when a failed init drops the last instance. */
  g_type_module_use (G_TYPE_MODULE (module));
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
  (void) module;
}

G_MODULE_EXPORT gchar **
g_io_module_query (void)
{
  gchar *extension_points[] = { (gchar *) G_NETWORK_MONITOR_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}
