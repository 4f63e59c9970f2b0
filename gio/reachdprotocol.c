/* reachd's varlink protocol as the GIO module speaks it (reachdprotocol.h). No I/O: whatever
 * the socket delivered comes in as bytes, and every function here must hold for any bytes. */

#include "reachdprotocol.h"

#include <string.h>

#include <json-glib/json-glib.h>

/* Only the Status fields the mapping or the path reads make an event worth a wake-up. */
static const gchar *const subscribe_changes[] = { "connectivity", "expensive", "gateways", "primary", "reachable", "vpn" };

/* --- State ------------------------------------------------------------------------------------ */

void
reachd_state_clear (ReachdState *state)
{
  g_clear_pointer (&state->path, g_free);
}

void
reachd_state_copy (ReachdState *destination, const ReachdState *source)
{
  g_autofree gchar *previous = g_steal_pointer (&destination->path);

  *destination = *source;
  destination->path = g_strdup (source->path);
}

ReachdChanges
reachd_state_compare (const ReachdState *before, const ReachdState *after)
{
  ReachdChanges changes = 0;

  if (before->available != after->available)
    changes |= REACHD_CHANGED_AVAILABLE;
  if (before->metered != after->metered)
    changes |= REACHD_CHANGED_METERED;
  if (before->connectivity != after->connectivity)
    changes |= REACHD_CHANGED_CONNECTIVITY;
  if (g_strcmp0 (before->path, after->path) != 0)
    changes |= REACHD_CHANGED_PATH;
  return changes;
}

/* --- Framing ---------------------------------------------------------------------------------- */

void
reachd_framer_init (ReachdFramer *framer, gsize max_bytes, guint max_depth)
{
  memset (framer, 0, sizeof *framer);
  framer->buffer = g_byte_array_new ();
  framer->max_bytes = max_bytes;
  framer->max_depth = max_depth;
}

void
reachd_framer_clear (ReachdFramer *framer)
{
  g_clear_pointer (&framer->buffer, g_byte_array_unref);
}

void
reachd_framer_push (ReachdFramer *framer, const guint8 *data, gsize length)
{
  /* Messages handed out point into the buffer: they are dropped only now. */
  if (framer->start > 0)
    {
      g_byte_array_remove_range (framer->buffer, 0, (guint) framer->start);
      framer->scanned -= framer->start;
      framer->start = 0;
    }
  g_byte_array_append (framer->buffer, data, (guint) length);
}

/* Where the framer's scan is within a message. */
enum
{
  LEXER_VALUE,      /* between strings: brackets count */
  LEXER_STRING,     /* in a double-quoted string */
  LEXER_ESCAPE,     /* after a backslash in a string */
  LEXER_HEX1,       /* in the four hex digits of a \u escape: HEX1 + n digits read */
  LEXER_HEX4 = LEXER_HEX1 + 3,
};

static gboolean
not_json (GError **error, const gchar *what)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply from reachd is not JSON: %s", what);
  return FALSE;
}

/* The next complete message (without its NUL, which still follows it in memory), valid until
 * the next push. FALSE without an error: none complete yet. The nesting is counted as the
 * bytes are scanned, so a deep message is refused after max_depth + 1 brackets whatever
 * follows. */
gboolean
reachd_framer_next (ReachdFramer *framer, const gchar **message, gsize *length, GError **error)
{
  const guint8 *data = framer->buffer->data;
  gsize end = framer->buffer->len;

  for (; framer->scanned < end; framer->scanned++)
    {
      guint8 byte = data[framer->scanned];

      if (byte == '\0')
        {
          *message = (const gchar *) data + framer->start;
          *length = framer->scanned - framer->start;
          framer->scanned++;
          framer->start = framer->scanned;
          framer->depth = 0;
          framer->lexer = LEXER_VALUE;
          return TRUE;
        }
      if (framer->scanned - framer->start >= framer->max_bytes)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                       "reply from reachd longer than %" G_GSIZE_FORMAT " bytes", framer->max_bytes);
          return FALSE;
        }
      switch (framer->lexer)
        {
        case LEXER_VALUE:
          if (byte == '"')
            framer->lexer = LEXER_STRING;
          else if (byte == '[' || byte == '{')
            {
              if (++framer->depth > framer->max_depth)
                {
                  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                               "reply from reachd nested deeper than %u levels", framer->max_depth);
                  return FALSE;
                }
            }
          else if ((byte == ']' || byte == '}') && framer->depth > 0)
            framer->depth--;
          else if (byte == '\'' || byte == '/')
            return not_json (error, "a quote or comment json-glib would read otherwise");
          break;
        case LEXER_STRING:
          if (byte == '"')
            framer->lexer = LEXER_VALUE;
          else if (byte == '\\')
            framer->lexer = LEXER_ESCAPE;
          else if (byte < 0x20)
            return not_json (error, "a control character in a string");
          break;
        case LEXER_ESCAPE:
          if (byte == 'u')
            framer->lexer = LEXER_HEX1;
          else if (strchr ("\"\\/bfnrt", byte) != NULL)
            framer->lexer = LEXER_STRING;
          else
            return not_json (error, "an unknown escape in a string");
          break;
        default:   /* LEXER_HEX1..LEXER_HEX4 */
          if (!g_ascii_isxdigit (byte))
            return not_json (error, "a \\u escape without four hex digits");
          framer->lexer = framer->lexer == LEXER_HEX4 ? LEXER_STRING : framer->lexer + 1;
          break;
        }
    }
  return FALSE;
}

/* Bytes of a message that has not ended yet are held. */
gboolean
reachd_framer_has_partial (const ReachdFramer *framer)
{
  return framer->buffer->len > framer->start;
}

/* --- Replies ---------------------------------------------------------------------------------- */

static JsonNode *
member (JsonObject *object, const gchar *name)
{
  return object != NULL ? json_object_get_member (object, name) : NULL;
}

static const gchar *
member_string (JsonObject *object, const gchar *name)
{
  JsonNode *node = member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static gboolean
member_boolean (JsonObject *object, const gchar *name)
{
  JsonNode *node = member (object, name);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN &&
         json_node_get_boolean (node);
}

static gboolean
member_integer (JsonObject *object, const gchar *name, gint64 *value)
{
  JsonNode *node = member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *value = json_node_get_int (node);
  return TRUE;
}

static JsonObject *
member_object (JsonObject *object, const gchar *name)
{
  JsonNode *node = member (object, name);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* The reply's top-level object. The framer has bounded its size and depth. */
static JsonParser *
parse_reply (const gchar *data, gsize length, JsonObject **root, GError **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  JsonNode *node;

  if (length > G_MAXSSIZE || !json_parser_load_from_data (parser, data, (gssize) length, error))
    return NULL;
  node = json_parser_get_root (parser);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reply from reachd is no JSON object");
      return NULL;
    }
  *root = json_node_get_object (node);
  return g_steal_pointer (&parser);
}

/* The apps' traffic over the path goes unanswered: its primary interface, or the VPN on top,
 * carries a data stall (Interface.stall, an object; null or absent otherwise). */
static gboolean
path_stalled (JsonObject *status)
{
  return member_object (member_object (status, "primary"), "stall") != NULL ||
         member_object (member_object (status, "vpn"), "stall") != NULL;
}

static gboolean
state_from_status (JsonObject *status, ReachdState *state)
{
  const gchar *connectivity = member_string (status, "connectivity");
  JsonNode *gateways = member (status, "gateways");
  g_autoptr(GString) path = NULL;

  if (connectivity == NULL || member (status, "reachable") == NULL)
    return FALSE;
  state->available = member_boolean (status, "reachable");
  state->metered = member_boolean (status, "expensive");
  if (!state->available)
    state->connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
  else if (g_str_equal (connectivity, "none") || g_str_equal (connectivity, "limited"))
    state->connectivity = G_NETWORK_CONNECTIVITY_LIMITED;
  else if (g_str_equal (connectivity, "portal"))
    state->connectivity = G_NETWORK_CONNECTIVITY_PORTAL;
  else if (path_stalled (status))
    /* Not full while nothing answers the apps, whatever the last check said: reachd checks
     * again at once, and only that check moves its verdict. A portal stays a portal (its
     * login is the way out). */
    state->connectivity = G_NETWORK_CONNECTIVITY_LIMITED;
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

          if (JSON_NODE_HOLDS_VALUE (gateway) && json_node_get_value_type (gateway) == G_TYPE_STRING)
            g_string_append_printf (path, "%s,", json_node_get_string (gateway));
        }
    }
  g_free (state->path);
  state->path = g_string_free (g_steal_pointer (&path), FALSE);
  return TRUE;
}

gboolean
reachd_parse_event (const gchar *data, gsize length, gint64 *sequence, ReachdState *state, GError **error)
{
  JsonObject *root = NULL, *event;
  g_autoptr(JsonParser) parser = parse_reply (data, length, &root, error);
  const gchar *failure;

  if (parser == NULL)
    return FALSE;
  if ((failure = member_string (root, "error")) != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "reachd answered %s", failure);
      return FALSE;
    }
  event = member_object (member_object (root, "parameters"), "event");
  if (!member_integer (event, "sequence", sequence) || !state_from_status (member_object (event, "current"), state))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reachd sent a reply that is no event");
      return FALSE;
    }
  return TRUE;
}

gboolean
reachd_parse_check (const gchar *data, gsize length, guint max_retry_ms, ReachdCheckAnswer *answer,
                    guint *retry_after_ms, gchar **failure, GError **error)
{
  JsonObject *root = NULL, *result;
  g_autoptr(JsonParser) parser = parse_reply (data, length, &root, error);
  const gchar *name;
  gint64 delay = 100;

  if (parser == NULL)
    return FALSE;
  if ((name = member_string (root, "error")) != NULL)
    {
      if (g_str_equal (name, REACHD_INTERFACE ".HostNotFound"))
        *answer = REACHD_CHECK_HOST_NOT_FOUND;
      else if (g_str_equal (name, REACHD_INTERFACE ".Busy"))
        {
          member_integer (member_object (root, "parameters"), "retryAfterMs", &delay);
          *answer = REACHD_CHECK_BUSY;
          *retry_after_ms = (guint) CLAMP (delay, 1, (gint64) max_retry_ms);
        }
      else
        {
          *answer = REACHD_CHECK_FAILED;
          *failure = g_strdup (name);
        }
      return TRUE;
    }
  result = member_object (member_object (root, "parameters"), "result");
  if (result == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "reachd sent a reply that is no check");
      return FALSE;
    }
  *answer = member_boolean (result, "reachable") ? REACHD_CHECK_REACHABLE : REACHD_CHECK_UNREACHABLE;
  return TRUE;
}

/* --- Calls ------------------------------------------------------------------------------------ */

/* {"method": METHOD, "parameters": { …what the caller adds… */
static JsonBuilder *
call_begin (const gchar *method)
{
  JsonBuilder *builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, method);
  json_builder_set_member_name (builder, "parameters");
  json_builder_begin_object (builder);
  return builder;
}

/* … }, "more": true?} with the NUL that ends a varlink message. */
static GBytes *
call_end (JsonBuilder *builder, gboolean more)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  gchar *text;
  gsize length = 0;

  json_builder_end_object (builder);
  if (more)
    {
      json_builder_set_member_name (builder, "more");
      json_builder_add_boolean_value (builder, TRUE);
    }
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  text = json_generator_to_data (generator, &length);
  return g_bytes_new_take (text, length + 1);
}

GBytes *
reachd_subscribe_call (gboolean resume, gint64 after)
{
  g_autoptr(JsonBuilder) builder = call_begin (REACHD_INTERFACE ".Subscribe");
  gsize i;

  if (resume)
    {
      json_builder_set_member_name (builder, "after");
      json_builder_add_int_value (builder, after);
    }
  json_builder_set_member_name (builder, "changes");
  json_builder_begin_array (builder);
  for (i = 0; i < G_N_ELEMENTS (subscribe_changes); i++)
    json_builder_add_string_value (builder, subscribe_changes[i]);
  json_builder_end_array (builder);
  return call_end (builder, TRUE);
}

GBytes *
reachd_check_call (const gchar *host, guint port)
{
  g_autoptr(JsonBuilder) builder = call_begin (REACHD_INTERFACE ".Check");

  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, host);
  if (port != 0)
    {
      json_builder_set_member_name (builder, "port");
      json_builder_add_int_value (builder, port);
    }
  return call_end (builder, FALSE);
}
