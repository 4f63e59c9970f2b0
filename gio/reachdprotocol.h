/* The GIO module's side of reachd's varlink protocol, without sockets or main loops: framing
 * (with the nesting and size limits), what a reply means, and the calls the module sends.
 * Built into libgioreachd.so and into the libFuzzer target (fuzz/targets/gio.c), which feeds it
 * any bytes. */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define REACHD_INTERFACE "io.reachd.Reachability"

/* reachd queues at most 1 MiB for one subscriber, so none of its messages is larger; a real
 * event is 1–3 KiB. A reply that grows past this without its NUL ends the connection. */
#define REACHD_MAX_MESSAGE_BYTES (1024 * 1024)

/* reachd's replies nest 5 levels deep (reply, parameters, event, current, primary/addresses).
 * json-glib's parser recurses once per level, so a deeper message is refused before it sees it. */
#define REACHD_MAX_DEPTH 32

/* What an app sees, and the path it is on (primary interface, VPN, gateways). */
typedef struct
{
  gboolean available;
  gboolean metered;
  GNetworkConnectivity connectivity;
  gchar *path;
} ReachdState;

void reachd_state_clear (ReachdState *state);
void reachd_state_copy (ReachdState *destination, const ReachdState *source);

typedef enum
{
  REACHD_CHANGED_AVAILABLE = 1 << 0,
  REACHD_CHANGED_METERED = 1 << 1,
  REACHD_CHANGED_CONNECTIVITY = 1 << 2,
  REACHD_CHANGED_PATH = 1 << 3,
} ReachdChanges;

ReachdChanges reachd_state_compare (const ReachdState *before, const ReachdState *after);

/* Splits a byte stream into varlink messages (each ends with a NUL) and refuses, as the bytes
 * arrive, a message nested deeper than max_depth or longer than max_bytes: at most max_bytes
 * plus one push are ever held. It counts the nesting as a strict JSON lexer would, and refuses
 * what strict JSON does not have but json-glib would read differently (single-quoted strings,
 * comments, malformed escapes), so that json-glib never sees more levels than it counted. */
typedef struct
{
  GByteArray *buffer;
  gsize start;        /* first byte of the message being received */
  gsize scanned;      /* bytes of buffer looked at */
  gsize max_bytes;
  guint max_depth;
  guint depth;
  guint lexer;        /* where the scan is: between values, in a string, in an escape */
} ReachdFramer;

void reachd_framer_init (ReachdFramer *framer, gsize max_bytes, guint max_depth);
void reachd_framer_clear (ReachdFramer *framer);
void reachd_framer_push (ReachdFramer *framer, const guint8 *data, gsize length);
gboolean reachd_framer_next (ReachdFramer *framer, const gchar **message, gsize *length, GError **error);
gboolean reachd_framer_has_partial (const ReachdFramer *framer);

/* One reply of Subscribe: its sequence number and what it says. FALSE with an error for an
 * error reply or anything that is no event. */
gboolean reachd_parse_event (const gchar *data, gsize length, gint64 *sequence, ReachdState *state, GError **error);

typedef enum
{
  REACHD_CHECK_REACHABLE,
  REACHD_CHECK_UNREACHABLE,
  REACHD_CHECK_HOST_NOT_FOUND,
  REACHD_CHECK_BUSY,
  REACHD_CHECK_FAILED,
} ReachdCheckAnswer;

/* The reply of a Check. BUSY comes with the delay reachd asks for (clamped to 1..max_retry_ms);
 * FAILED with the name of the error reachd answered. FALSE with an error when it is no reply
 * of Check at all. */
gboolean reachd_parse_check (const gchar *data, gsize length, guint max_retry_ms, ReachdCheckAnswer *answer,
                             guint *retry_after_ms, gchar **failure, GError **error);

/* The calls, each with the NUL that ends a varlink message. */
GBytes *reachd_subscribe_call (gboolean resume, gint64 after);
GBytes *reachd_check_call (const gchar *host, guint port);

G_END_DECLS
