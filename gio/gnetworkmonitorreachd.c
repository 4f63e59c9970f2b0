/* libgioreachd: a GNetworkMonitor for GLib/GIO that asks reachd.
 *
 * Implements the "gio-network-monitor" extension point as "reachd", priority 35: above
 * NetworkManager's (30) and netlink's (20), below the portal's (40), so that a sandboxed app
 * keeps using the portal and the portal's host side uses reachd.
 *
 * One varlink connection per process: io.reachd.Reachability.Subscribe with "more", on the main
 * context that was the thread-default where the monitor was created; network-changed and the
 * property notifications are emitted there. Init waits for reachd's first reply at most
 * INIT_TIMEOUT_US and fails otherwise, so that GLib uses the next implementation. When reachd
 * goes away the last answers stay (stale) while the module reconnects with a growing delay and
 * resumes by sequence number; can_reach asks reachd's Check on a connection of its own.
 *
 * The module runs inside every GLib app, so whatever comes from the socket must not hurt it
 * (docs/glib.md, "Limits"): replies are framed and bounded (depth, size) before json-glib sees
 * them (reachdprotocol.c); each dispatch does a few milliseconds of work, then lets the loop
 * run; network-changed is emitted at most once per main-loop iteration; every wait has an end;
 * and the reconnections are spaced however reachd behaves.
 *
 * The mapping (docs/glib.md):
 *   not reachable                          LOCAL, network-available FALSE
 *   reachable, connectivity none/limited   LIMITED
 *   reachable, connectivity portal         PORTAL
 *   reachable, full/unknown, path stalled  LIMITED (primary.stall or vpn.stall set)
 *   reachable, connectivity full/unknown   FULL
 *   network-metered                        Status.expensive
 */

#define _GNU_SOURCE   /* secure_getenv */
#define G_LOG_DOMAIN "GLib-GIO-reachd"

#include <stdlib.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>

#include "reachdprotocol.h"

#define REACHD_SYSTEM_SOCKET "/run/reachd/" REACHD_INTERFACE
/* GLib gives up on an implementation whose init fails; ours must fail within 100 ms. */
#define INIT_TIMEOUT_US (90 * G_TIME_SPAN_MILLISECOND)
/* A reconnection must be answered within this, and a message once begun must end within it
 * (reachd's own rule for its clients): otherwise the connection is dropped and tried again. */
#define REPLY_TIMEOUT_US (10 * G_TIME_SPAN_SECOND)
#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 5000
/* Only a subscription that lived this long starts the back-off again from RETRY_MIN_MS: a
 * reachd that answers and hangs up, or crashes, at once costs at most one connection per
 * RETRY_MAX_MS. */
#define RETRY_RESET_AFTER_US (10 * G_TIME_SPAN_SECOND)
/* The work one dispatch of a connection may do before it lets the main loop run: reads of
 * READ_CHUNK bytes and the messages in them, until this much time has gone. One message is
 * always handled whole (json-glib parses it in one go). */
#define DISPATCH_BUDGET_US (2 * G_TIME_SPAN_MILLISECOND)
#define READ_CHUNK 16384
/* GLib dispatches only the most urgent sources that are ready: a subscription at the default
 * priority that always had bytes would keep every idle source of the app (GTK's drawing at
 * G_PRIORITY_HIGH_IDLE + 20, idle callbacks) from running. Events wait for those instead. */
#define SUBSCRIPTION_PRIORITY G_PRIORITY_DEFAULT_IDLE
/* can_reach in total, Busy answers and their waits included: reachd gives up on a name after
 * 5 s; past this the answer comes from the last status. */
#define CHECK_TIMEOUT_US (10 * G_TIME_SPAN_SECOND)
/* reachd limits the look-ups in flight per user: asked again after the time it names, a few
 * times, then answered from the last status. */
#define CHECK_ATTEMPTS 4
#define CHECK_RETRY_MAX_MS 2000

#define G_TYPE_NETWORK_MONITOR_REACHD (g_network_monitor_reachd_get_type ())
G_DECLARE_FINAL_TYPE (GNetworkMonitorReachd, g_network_monitor_reachd, G, NETWORK_MONITOR_REACHD, GObject)

enum
{
  PROP_0,
  PROP_NETWORK_AVAILABLE,
  PROP_NETWORK_METERED,
  PROP_CONNECTIVITY
};

/* --- Where reachd listens: as reachctl finds it ---------------------------------------------- */

/* A set-uid or set-gid program runs with its caller's environment: there REACHD_SOCKET and
 * XDG_RUNTIME_DIR are not trusted. secure_getenv refuses them after such an exec (AT_SECURE);
 * a process whose ids differ otherwise is treated alike. */
static const gchar *
trusted_getenv (const gchar *name)
{
  if (getuid () != geteuid () || getgid () != getegid ())
    return NULL;
  return secure_getenv (name);
}

static gchar *
resolve_socket_path (void)
{
  const gchar *explicit = trusted_getenv ("REACHD_SOCKET");
  const gchar *runtime = trusted_getenv ("XDG_RUNTIME_DIR");

  if (explicit != NULL && explicit[0] != '\0')
    return g_strdup (explicit);
  if (g_file_test (REACHD_SYSTEM_SOCKET, G_FILE_TEST_EXISTS))
    return g_strdup (REACHD_SYSTEM_SOCKET);
  if (runtime != NULL && runtime[0] != '\0')
    {
      g_autofree gchar *user = g_build_filename (runtime, "reachd", REACHD_INTERFACE, NULL);

      if (g_file_test (user, G_FILE_TEST_EXISTS))
        return g_steal_pointer (&user);
    }
  return g_strdup (REACHD_SYSTEM_SOCKET);
}

/* --- A source that fires when its ready time comes (and on its fd, when it has one) ------------ */

static gboolean
wake_source_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  (void) source;
  return callback (user_data);
}

static GSourceFuncs wake_source_funcs = { NULL, NULL, wake_source_dispatch, NULL, NULL, NULL };

static GSource *
wake_source_new (GMainContext *context, gint priority, GSourceFunc callback, gpointer user_data)
{
  GSource *source = g_source_new (&wake_source_funcs, sizeof (GSource));

  g_source_set_priority (source, priority);
  g_source_set_callback (source, callback, user_data, NULL);
  g_source_set_ready_time (source, -1);
  g_source_attach (source, context);
  return source;
}

static void
source_destroy_and_unref (GSource *source)
{
  g_source_destroy (source);
  g_source_unref (source);
}

/* --- One varlink connection to reachd ---------------------------------------------------------- */

/* Connects without blocking, sends one call and hands each reply (framed and bounded) to its
 * owner, a few milliseconds of work per dispatch of its source on `context`. Reference
 * counted: a callback may drop the owner's reference, the dispatch holds one of its own. */
typedef struct _ReachdConnection ReachdConnection;

typedef struct
{
  /* One reply (without its NUL). The owner may close the connection here. */
  void (*message) (ReachdConnection *connection, const gchar *data, gsize length, gpointer user_data);
  /* The connection failed and is closed; called at most once, never after a close. */
  void (*failed) (ReachdConnection *connection, const GError *error, gpointer user_data);
} ReachdConnectionFuncs;

struct _ReachdConnection
{
  GSocket *socket;
  GSource *source;
  gint priority;
  gpointer fd_tag;
  GIOCondition condition;    /* what the source polls the socket for */
  GBytes *request;
  gsize sent;
  ReachdFramer framer;
  gint64 deadline;           /* the owner's: fails with TIMED_OUT then; -1 none */
  gint64 partial_deadline;   /* the message being received must end by then; -1 none */
  gboolean connected;
  gboolean closed;
  const ReachdConnectionFuncs *funcs;
  gpointer user_data;
};

static gboolean connection_dispatch (gpointer user_data);

static void
connection_close (ReachdConnection *connection)
{
  connection->closed = TRUE;
  g_clear_pointer (&connection->source, source_destroy_and_unref);
  if (connection->socket != NULL)
    g_socket_close (connection->socket, NULL);
}

static void
connection_clear (ReachdConnection *connection)
{
  connection_close (connection);
  g_clear_object (&connection->socket);
  g_clear_pointer (&connection->request, g_bytes_unref);
  reachd_framer_clear (&connection->framer);
}

static ReachdConnection *
connection_ref (ReachdConnection *connection)
{
  return g_rc_box_acquire (connection);
}

static void
connection_unref (ReachdConnection *connection)
{
  g_rc_box_release_full (connection, (GDestroyNotify) connection_clear);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReachdConnection, connection_unref)

/* The source's wake-up: the socket's condition, and the earliest of the deadlines, or now when
 * replies are still buffered. */
static void
connection_arm (ReachdConnection *connection, gboolean more_buffered)
{
  GIOCondition condition = g_bytes_get_size (connection->request) > connection->sent ? G_IO_OUT : G_IO_IN;
  gint64 ready = connection->deadline;

  if (connection->partial_deadline >= 0 && (ready < 0 || connection->partial_deadline < ready))
    ready = connection->partial_deadline;
  if (more_buffered)
    ready = 0;
  g_source_set_ready_time (connection->source, ready);
  /* Each change wakes the context up: only when there is one. */
  if (condition != connection->condition)
    {
      g_source_modify_unix_fd (connection->source, connection->fd_tag, condition);
      connection->condition = condition;
    }
}

/* Moves the connection's source to `context` (init reads the first reply on a private one). */
static void
connection_attach (ReachdConnection *connection, GMainContext *context, gboolean more_buffered)
{
  g_clear_pointer (&connection->source, source_destroy_and_unref);
  connection->source = g_source_new (&wake_source_funcs, sizeof (GSource));
  connection->condition = G_IO_OUT;
  connection->fd_tag = g_source_add_unix_fd (connection->source, g_socket_get_fd (connection->socket), connection->condition);
  g_source_set_priority (connection->source, connection->priority);
  g_source_set_callback (connection->source, connection_dispatch, connection, NULL);
  g_source_attach (connection->source, context);
  connection_arm (connection, more_buffered);
}

/* NULL with an error when the connection fails at once (no socket file, refused). */
static ReachdConnection *
connection_new (const gchar *path, GBytes *request, GMainContext *context, gint priority,
                const ReachdConnectionFuncs *funcs, gpointer user_data, GError **error)
{
  g_autoptr(ReachdConnection) connection = g_rc_box_new0 (ReachdConnection);
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (path);
  g_autoptr(GError) local = NULL;

  connection->request = g_bytes_ref (request);
  connection->priority = priority;
  connection->deadline = -1;
  connection->partial_deadline = -1;
  connection->funcs = funcs;
  connection->user_data = user_data;
  reachd_framer_init (&connection->framer, REACHD_MAX_MESSAGE_BYTES, REACHD_MAX_DEPTH);
  connection->socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, error);
  if (connection->socket == NULL)
    return NULL;
  g_socket_set_blocking (connection->socket, FALSE);
  if (g_socket_connect (connection->socket, address, NULL, &local))
    connection->connected = TRUE;
  else if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_PENDING))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", path);
      return NULL;
    }
  connection_attach (connection, context, FALSE);
  return g_steal_pointer (&connection);
}

static void
connection_set_deadline (ReachdConnection *connection, gint64 deadline)
{
  connection->deadline = deadline;
  if (!connection->closed)
    connection_arm (connection, FALSE);
}

static void
connection_fail (ReachdConnection *connection, const GError *error)
{
  connection_close (connection);
  connection->funcs->failed (connection, error, connection->user_data);
}

/* Connecting, then sending the call: TRUE once all of it is sent. */
static gboolean
connection_send (ReachdConnection *connection, GError **error)
{
  gsize size = 0;
  const gchar *data = g_bytes_get_data (connection->request, &size);

  if (!connection->connected)
    {
      if (!g_socket_check_connect_result (connection->socket, error))
        return FALSE;
      connection->connected = TRUE;
    }
  while (connection->sent < size)
    {
      g_autoptr(GError) local = NULL;
      gssize n = g_socket_send (connection->socket, data + connection->sent, size - connection->sent, NULL, &local);

      if (n < 0 && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        return TRUE;
      if (n < 0)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      connection->sent += (gsize) n;
    }
  return TRUE;
}

/* Hands buffered replies to the owner and reads more, until the budget is spent, the socket
 * has nothing more, or the owner closed the connection. *more_buffered: stopped by the budget,
 * with work perhaps left (the socket source only fires for new bytes). */
static gboolean
connection_receive (ReachdConnection *connection, gint64 budget_end, gboolean *more_buffered, GError **error)
{
  guint8 buffer[READ_CHUNK];

  *more_buffered = FALSE;
  while (!connection->closed)
    {
      const gchar *message = NULL;
      gsize length = 0;

      if (reachd_framer_next (&connection->framer, &message, &length, error))
        {
          connection->partial_deadline = -1;
          connection->funcs->message (connection, message, length, connection->user_data);
        }
      else if (error != NULL && *error != NULL)
        return FALSE;
      else
        {
          g_autoptr(GError) local = NULL;
          gssize n = g_socket_receive (connection->socket, (gchar *) buffer, sizeof buffer, NULL, &local);

          if (n < 0 && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            break;
          if (n < 0)
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return FALSE;
            }
          if (n == 0)
            {
              g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "reachd closed the connection");
              return FALSE;
            }
          reachd_framer_push (&connection->framer, buffer, (gsize) n);
        }
      if (g_get_monotonic_time () >= budget_end)
        {
          *more_buffered = TRUE;
          break;
        }
    }
  if (!connection->closed && reachd_framer_has_partial (&connection->framer) && connection->partial_deadline < 0)
    connection->partial_deadline = g_get_monotonic_time () + REPLY_TIMEOUT_US;
  return TRUE;
}

static gboolean
connection_dispatch (gpointer user_data)
{
  g_autoptr(ReachdConnection) connection = connection_ref (user_data);
  g_autoptr(GError) error = NULL;
  gint64 now = g_get_monotonic_time ();
  gboolean more_buffered = FALSE;

  if ((connection->deadline >= 0 && now >= connection->deadline) ||
      (connection->partial_deadline >= 0 && now >= connection->partial_deadline))
    {
      g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "reachd did not answer in time");
      connection_fail (connection, error);
      return G_SOURCE_REMOVE;
    }
  if (connection->sent < g_bytes_get_size (connection->request))
    {
      if (!connection_send (connection, &error))
        {
          connection_fail (connection, error);
          return G_SOURCE_REMOVE;
        }
    }
  if (connection->sent == g_bytes_get_size (connection->request) &&
      !connection_receive (connection, now + DISPATCH_BUDGET_US, &more_buffered, &error))
    {
      connection_fail (connection, error);
      return G_SOURCE_REMOVE;
    }
  if (connection->closed)
    return G_SOURCE_REMOVE;
  connection_arm (connection, more_buffered);
  return G_SOURCE_CONTINUE;
}

/* --- The monitor ------------------------------------------------------------------------------- */

struct _GNetworkMonitorReachd
{
  GObject parent_instance;

  GMainContext *context;       /* where the monitor was created: every source and signal is here */
  ReachdState state;           /* reachd's last answer: what the getters return */
  ReachdState announced;       /* what the last signals told */
  gint available;              /* state.available, for can_reach on other threads (atomic) */
  GSource *announce_source;    /* ready while state and announced differ */
  gboolean initializing;       /* the first subscription: no signals */
  GError *init_error;

  ReachdConnection *subscription;  /* NULL between connections */
  gint64 subscribed_at;
  gboolean answered;           /* the subscription has delivered an event */
  GSource *retry_source;
  guint retry_ms;
  gint64 sequence;             /* last event seen; resume after it */
  gboolean have_sequence;
};

static void g_network_monitor_reachd_iface_init (GNetworkMonitorInterface *iface);
static void g_network_monitor_reachd_initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (GNetworkMonitorReachd, g_network_monitor_reachd, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                /* GInitable first: GNetworkMonitor requires it. */
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               g_network_monitor_reachd_initable_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_NETWORK_MONITOR,
                                                               g_network_monitor_reachd_iface_init))

/* Signals what changed since the last signals, once for however many events came in between:
 * a notify per property that differs (frozen, so they come together), then network-changed. */
static gboolean
announce_cb (gpointer user_data)
{
  GNetworkMonitorReachd *self = user_data;
  g_autoptr(GObject) keep = g_object_ref (G_OBJECT (self));
  ReachdChanges changes;

  g_source_set_ready_time (self->announce_source, -1);
  changes = reachd_state_compare (&self->announced, &self->state);
  if (changes == 0)
    return G_SOURCE_CONTINUE;
  reachd_state_copy (&self->announced, &self->state);
  g_object_freeze_notify (keep);
  if (changes & REACHD_CHANGED_AVAILABLE)
    g_object_notify (keep, "network-available");
  if (changes & REACHD_CHANGED_METERED)
    g_object_notify (keep, "network-metered");
  if (changes & REACHD_CHANGED_CONNECTIVITY)
    g_object_notify (keep, "connectivity");
  g_object_thaw_notify (keep);
  g_debug ("network-changed: available %d, metered %d, connectivity %d, path %s", self->announced.available,
           self->announced.metered, self->announced.connectivity, self->announced.path);
  g_signal_emit_by_name (self, "network-changed", self->announced.available);
  return G_SOURCE_CONTINUE;
}

static void subscribe (GNetworkMonitorReachd *self, GMainContext *context, gint64 deadline);

static gboolean
retry_cb (gpointer user_data)
{
  GNetworkMonitorReachd *self = user_data;

  g_clear_pointer (&self->retry_source, g_source_unref);
  subscribe (self, self->context, g_get_monotonic_time () + REPLY_TIMEOUT_US);
  return G_SOURCE_REMOVE;
}

static void
schedule_retry (GNetworkMonitorReachd *self, const GError *why)
{
  guint delay;

  if (self->answered && g_get_monotonic_time () - self->subscribed_at >= RETRY_RESET_AFTER_US)
    self->retry_ms = RETRY_MIN_MS;
  self->answered = FALSE;
  delay = self->retry_ms;
  self->retry_ms = MIN (self->retry_ms * 2, RETRY_MAX_MS);
  g_debug ("reachd: %s; trying again in %u ms", why->message, delay);
  g_clear_pointer (&self->retry_source, source_destroy_and_unref);
  self->retry_source = g_timeout_source_new (delay);
  g_source_set_callback (self->retry_source, retry_cb, self, NULL);
  g_source_attach (self->retry_source, self->context);
}

/* The subscription is gone (or never came): the last answers stay, and the next try comes
 * later each time, up to RETRY_MAX_MS, for as long as the app runs. During init, init
 * decides. */
static void
subscription_lost (GNetworkMonitorReachd *self, const GError *why)
{
  if (self->subscription != NULL)
    connection_close (self->subscription);
  g_clear_pointer (&self->subscription, connection_unref);
  if (self->initializing)
    {
      if (self->init_error == NULL)
        self->init_error = g_error_copy (why);
      return;
    }
  schedule_retry (self, why);
}

static void
subscription_message (ReachdConnection *connection, const gchar *data, gsize length, gpointer user_data)
{
  GNetworkMonitorReachd *self = user_data;
  g_autoptr(GError) error = NULL;
  ReachdState next = { 0 };
  gint64 sequence = 0;

  if (!reachd_parse_event (data, length, &sequence, &next, &error))
    {
      reachd_state_clear (&next);
      subscription_lost (self, error);
      return;
    }
  if (!self->answered)
    {
      if (!self->initializing)
        g_debug ("reachd: subscribed again (after %" G_GINT64_FORMAT ")", self->sequence);
      self->answered = TRUE;
      connection_set_deadline (connection, -1);
    }
  self->sequence = sequence;
  self->have_sequence = TRUE;
  reachd_state_clear (&self->state);
  self->state = next;
  g_atomic_int_set (&self->available, self->state.available);
  if (!self->initializing)
    g_source_set_ready_time (self->announce_source, 0);
}

static void
subscription_failed (ReachdConnection *connection, const GError *error, gpointer user_data)
{
  (void) connection;
  subscription_lost (user_data, error);
}

static const ReachdConnectionFuncs subscription_funcs = { subscription_message, subscription_failed };

static void
subscribe (GNetworkMonitorReachd *self, GMainContext *context, gint64 deadline)
{
  g_autofree gchar *path = resolve_socket_path ();
  g_autoptr(GBytes) request = reachd_subscribe_call (self->have_sequence, self->sequence);
  g_autoptr(GError) error = NULL;

  self->answered = FALSE;
  self->subscribed_at = g_get_monotonic_time ();
  self->subscription = connection_new (path, request, context, SUBSCRIPTION_PRIORITY, &subscription_funcs, self, &error);
  if (self->subscription == NULL)
    subscription_lost (self, error);
  else
    connection_set_deadline (self->subscription, deadline);
}

/* --- GInitable: the first answer, or failure within INIT_TIMEOUT_US --------------------------- */

static gboolean
init_cancelled_cb (GCancellable *cancellable, gpointer user_data)
{
  GNetworkMonitorReachd *self = user_data;
  g_autoptr(GError) error = NULL;

  g_cancellable_set_error_if_cancelled (cancellable, &error);
  subscription_lost (self, error);
  return G_SOURCE_REMOVE;
}

/* The first subscription runs on a private context (never the app's, which must not run
 * inside g_network_monitor_get_default()), then moves to the monitor's. */
static gboolean
g_network_monitor_reachd_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  GNetworkMonitorReachd *self = G_NETWORK_MONITOR_REACHD (initable);
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GSource) cancelled = NULL;

  g_main_context_push_thread_default (context);
  if (cancellable != NULL)
    {
      cancelled = g_cancellable_source_new (cancellable);
      g_source_set_callback (cancelled, G_SOURCE_FUNC (init_cancelled_cb), self, NULL);
      g_source_attach (cancelled, context);
    }
  subscribe (self, context, g_get_monotonic_time () + INIT_TIMEOUT_US);
  while (self->subscription != NULL && !self->answered)
    g_main_context_iteration (context, TRUE);
  if (cancelled != NULL)
    g_source_destroy (cancelled);
  g_main_context_pop_thread_default (context);

  if (!self->answered)
    {
      g_debug ("reachd: not used: %s", self->init_error->message);
      g_propagate_error (error, g_steal_pointer (&self->init_error));
      return FALSE;
    }
  self->initializing = FALSE;
  reachd_state_copy (&self->announced, &self->state);
  self->announce_source = wake_source_new (self->context, SUBSCRIPTION_PRIORITY, announce_cb, self);
  g_debug ("reachd: subscribed (sequence %" G_GINT64_FORMAT ")", self->sequence);
  /* Whatever came after the first reply is handled on the monitor's context; a connection
   * already lost (reachd answered and hung up) is tried again from there. */
  if (self->subscription != NULL)
    connection_attach (self->subscription, self->context, TRUE);
  else
    schedule_retry (self, self->init_error);
  g_clear_error (&self->init_error);
  return TRUE;
}

static void
g_network_monitor_reachd_initable_iface_init (GInitableIface *iface)
{
  iface->init = g_network_monitor_reachd_initable_init;
}

/* --- can_reach: reachd's Check ----------------------------------------------------------------- */

/* One call of can_reach_async, on the task's context. Every way it ends goes through
 * check_stop, so that nothing of it fires after its result. */
typedef struct
{
  GBytes *request;
  ReachdConnection *connection;
  GSource *timeout_source;   /* the call's one deadline, CHECK_TIMEOUT_US after it began */
  GSource *retry_source;     /* reachd was busy: the next attempt */
  GSource *cancel_source;
  gint64 deadline;
  guint attempts;            /* Checks sent */
} CheckData;

static void
check_stop (CheckData *check)
{
  if (check->connection != NULL)
    connection_close (check->connection);
  g_clear_pointer (&check->connection, connection_unref);
  g_clear_pointer (&check->timeout_source, source_destroy_and_unref);
  g_clear_pointer (&check->retry_source, source_destroy_and_unref);
  g_clear_pointer (&check->cancel_source, source_destroy_and_unref);
}

static void
check_data_free (gpointer data)
{
  CheckData *check = data;

  check_stop (check);
  g_clear_pointer (&check->request, g_bytes_unref);
  g_free (check);
}

/* Ends the call with `error`, or TRUE when it is NULL. Takes the call's reference. */
static void
check_return (GTask *task, GError *error)
{
  check_stop (g_task_get_task_data (task));
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

/* reachd cannot be asked, or gave no answer: answer from the last status, as GLib's own
 * monitors answer from the routes they know. */
static void
check_return_from_state (GTask *task, const gchar *why)
{
  GNetworkMonitorReachd *self = g_task_get_source_object (task);

  g_debug ("reachd: Check: %s; answered from the last status", why);
  if (g_atomic_int_get (&self->available))
    check_return (task, NULL);
  else
    check_return (task, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "Network unreachable"));
}

static void check_start (GTask *task);

static gboolean
check_retry_cb (gpointer user_data)
{
  GTask *task = user_data;
  CheckData *check = g_task_get_task_data (task);

  g_clear_pointer (&check->retry_source, g_source_unref);
  check_start (task);
  return G_SOURCE_REMOVE;
}

static gboolean
check_timeout_cb (gpointer user_data)
{
  check_return_from_state (user_data, "no answer in time");
  return G_SOURCE_REMOVE;
}

static gboolean
check_cancelled_cb (GCancellable *cancellable, gpointer user_data)
{
  GError *error = NULL;

  g_cancellable_set_error_if_cancelled (cancellable, &error);
  check_return (user_data, error);
  return G_SOURCE_REMOVE;
}

static void
check_message (ReachdConnection *connection, const gchar *data, gsize length, gpointer user_data)
{
  GTask *task = user_data;
  GNetworkMonitorReachd *self = g_task_get_source_object (task);
  CheckData *check = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autofree gchar *failure = NULL;
  ReachdCheckAnswer answer = REACHD_CHECK_FAILED;
  guint delay = 0;

  (void) connection;
  if (!reachd_parse_check (data, length, CHECK_RETRY_MAX_MS, &answer, &delay, &failure, &error))
    {
      check_return_from_state (task, error->message);
      return;
    }
  switch (answer)
    {
    case REACHD_CHECK_REACHABLE:
      check_return (task, NULL);
      break;
    case REACHD_CHECK_UNREACHABLE:
      if (g_atomic_int_get (&self->available))
        check_return (task, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE, "Host unreachable"));
      else
        check_return (task, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "Network unreachable"));
      break;
    case REACHD_CHECK_HOST_NOT_FOUND:
      check_return (task, g_error_new_literal (G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND, "Host not found"));
      break;
    case REACHD_CHECK_BUSY:
      connection_close (check->connection);
      g_clear_pointer (&check->connection, connection_unref);
      if (check->attempts >= CHECK_ATTEMPTS ||
          g_get_monotonic_time () + delay * G_TIME_SPAN_MILLISECOND >= check->deadline)
        {
          check_return_from_state (task, "reachd stayed busy");
          break;
        }
      check->retry_source = g_timeout_source_new (delay);
      g_source_set_callback (check->retry_source, check_retry_cb, task, NULL);
      g_source_attach (check->retry_source, g_task_get_context (task));
      break;
    case REACHD_CHECK_FAILED:
      check_return (task, g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED, "reachd answered %s", failure));
      break;
    }
}

static void
check_failed (ReachdConnection *connection, const GError *error, gpointer user_data)
{
  (void) connection;
  check_return_from_state (user_data, error->message);
}

static const ReachdConnectionFuncs check_funcs = { check_message, check_failed };

/* Connects to reachd and sends the Check; check_message takes it from there. */
static void
check_start (GTask *task)
{
  CheckData *check = g_task_get_task_data (task);
  g_autofree gchar *path = resolve_socket_path ();
  g_autoptr(GError) error = NULL;

  check->attempts++;
  check->connection = connection_new (path, check->request, g_task_get_context (task), G_PRIORITY_DEFAULT, &check_funcs,
                                      task, &error);
  if (check->connection == NULL)
    check_return_from_state (task, error->message);
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

static void
g_network_monitor_reachd_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                          GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);
  CheckData *check = g_new0 (CheckData, 1);
  g_autofree gchar *host = NULL;
  GError *error = NULL;
  guint port = 0;

  g_task_set_source_tag (task, g_network_monitor_reachd_can_reach_async);
  g_task_set_task_data (task, check, check_data_free);
  if (!connectable_host (connectable, &host, &port, &error))
    {
      check_return (task, error);
      return;
    }
  check->request = reachd_check_call (host, port);
  check->deadline = g_get_monotonic_time () + CHECK_TIMEOUT_US;
  check->timeout_source = g_timeout_source_new ((guint) (CHECK_TIMEOUT_US / G_TIME_SPAN_MILLISECOND));
  g_source_set_callback (check->timeout_source, check_timeout_cb, task, NULL);
  g_source_attach (check->timeout_source, g_task_get_context (task));
  if (cancellable != NULL)
    {
      check->cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_callback (check->cancel_source, G_SOURCE_FUNC (check_cancelled_cb), task, NULL);
      g_source_attach (check->cancel_source, g_task_get_context (task));
    }
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
  (void) source;
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* The synchronous call blocks its caller, as GLib's own do (they resolve the name), at most
 * CHECK_TIMEOUT_US in all; it runs the asynchronous one on a private context, so it never
 * touches the app's. */
static gboolean
g_network_monitor_reachd_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                    GCancellable *cancellable, GError **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GAsyncResult) result = NULL;

  g_main_context_push_thread_default (context);
  g_network_monitor_reachd_can_reach_async (monitor, connectable, cancellable, sync_done_cb, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  return g_network_monitor_reachd_can_reach_finish (monitor, result, error);
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
  self->retry_ms = RETRY_MIN_MS;
  self->initializing = TRUE;
  self->state.connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
  self->announced.connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
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

  if (self->subscription != NULL)
    connection_close (self->subscription);
  g_clear_pointer (&self->subscription, connection_unref);
  g_clear_pointer (&self->retry_source, source_destroy_and_unref);
  g_clear_pointer (&self->announce_source, source_destroy_and_unref);
  g_clear_error (&self->init_error);
  reachd_state_clear (&self->state);
  reachd_state_clear (&self->announced);
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
