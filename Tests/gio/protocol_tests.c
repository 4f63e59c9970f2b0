/* The GIO module's protocol handling (gio/reachdprotocol.c) case by case, with GLib's GTest:
 * framing and its limits, each reply shape, and the calls the module sends. Built by `make gio`
 * into .build/gio-tests/protocol-tests; GIOHostileServerTests runs it. */

#include <string.h>

#include <json-glib/json-glib.h>

#include "reachdprotocol.h"

/* Every message of `input` (a C string: NULs as "\\0" inside it are given by `length`), pushed in
 * pieces of `chunk` bytes; the first error, if any, ends it. */
static GPtrArray *
frame (const gchar *input, gsize length, gsize chunk, gsize max_bytes, GError **error)
{
  g_autoptr(GPtrArray) messages = g_ptr_array_new_with_free_func (g_free);
  ReachdFramer framer;
  gsize offset = 0;

  reachd_framer_init (&framer, max_bytes, REACHD_MAX_DEPTH);
  while (offset < length)
    {
      const gchar *message;
      gsize size;
      gsize n = MIN (chunk, length - offset);

      reachd_framer_push (&framer, (const guint8 *) input + offset, n);
      offset += n;
      while (reachd_framer_next (&framer, &message, &size, error))
        g_ptr_array_add (messages, g_strndup (message, size));
      if (error != NULL && *error != NULL)
        break;
    }
  reachd_framer_clear (&framer);
  return g_steal_pointer (&messages);
}

static gchar *
nested (guint levels, const gchar *open, const gchar *inner, const gchar *close)
{
  GString *text = g_string_new (NULL);
  guint i;

  for (i = 0; i < levels; i++)
    g_string_append (text, open);
  g_string_append (text, inner);
  for (i = 0; i < levels; i++)
    g_string_append (text, close);
  return g_string_free (text, FALSE);
}

static void
test_framing_splits_messages_however_they_arrive (void)
{
  static const gchar input[] = "{\"a\":1}\0[2]\0\"x\\\"\\u0041\"\0";
  gsize chunk;

  for (chunk = 1; chunk <= sizeof input; chunk++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) messages = frame (input, sizeof input - 1, chunk, 1024, &error);

      g_assert_no_error (error);
      g_assert_cmpuint (messages->len, ==, 3);
      g_assert_cmpstr (messages->pdata[0], ==, "{\"a\":1}");
      g_assert_cmpstr (messages->pdata[1], ==, "[2]");
      g_assert_cmpstr (messages->pdata[2], ==, "\"x\\\"\\u0041\"");
    }
}

static void
test_framing_refuses_depth_over_the_limit (void)
{
  g_autofree gchar *at_limit = nested (REACHD_MAX_DEPTH, "[", "1", "]");
  g_autofree gchar *over = nested (REACHD_MAX_DEPTH + 1, "[", "1", "]");
  g_autofree gchar *objects = nested (REACHD_MAX_DEPTH + 1, "{\"a\":", "1", "}");
  g_autofree gchar *unended = nested (100000, "[", "", "");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) ok = frame (at_limit, strlen (at_limit) + 1, 7, 1024, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (ok->len, ==, 1);
  g_clear_pointer (&ok, g_ptr_array_unref);
  ok = frame (over, strlen (over) + 1, 7, 1024, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_cmpuint (ok->len, ==, 0);
  g_clear_error (&error);
  g_clear_pointer (&ok, g_ptr_array_unref);
  ok = frame (objects, strlen (objects) + 1, 4096, 4096, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error (&error);
  g_clear_pointer (&ok, g_ptr_array_unref);
  /* Refused at the 33rd bracket, long before the message (or its NUL) ends. */
  ok = frame (unended, strlen (unended), 64, 1024 * 1024, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
}

static void
test_framing_counts_brackets_outside_strings_only (void)
{
  g_autofree gchar *in_strings = nested (20, "[\"[{\\\"\",", "1", "]");
  g_autofree gchar *closers = g_strconcat ("[\"", "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "\",", NULL);
  g_autofree gchar *deep = nested (REACHD_MAX_DEPTH, "[", "1", "]");
  g_autofree gchar *evading = g_strconcat (closers, deep, "]", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) messages = NULL;

  /* 20 levels, each with two brackets and an escaped quote in a string: 20 counted, not 60. */
  messages = frame (in_strings, strlen (in_strings) + 1, 3, 4096, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (messages->len, ==, 1);
  g_clear_pointer (&messages, g_ptr_array_unref);
  /* Closing brackets in a string do not lower the count: 33 levels are 33. */
  messages = frame (evading, strlen (evading) + 1, 5, 4096, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
}

/* json-glib reads single-quoted strings and comments, where a double quote does not start a
 * string: a scanner that only knew JSON would lose count there. */
static void
test_framing_refuses_what_json_glib_reads_otherwise (void)
{
  const gchar *inputs[] = {
    "['\"', [[1]], '\"']", "/* \" */ [1]", "[\"\\x\"]", "[\"\\u12\"]", "[\"\\u12\\\"\", [1]]", "[\"a\tb\"]",
  };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) messages = frame (inputs[i], strlen (inputs[i]) + 1, 64, 4096, &error);

      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
      g_assert_cmpuint (messages->len, ==, 0);
    }
}

static void
test_framing_refuses_a_message_over_the_limit (void)
{
  g_autofree gchar *exact = g_strnfill (100, 'x');
  g_autofree gchar *over = g_strnfill (101, 'x');
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) messages = frame (exact, 101, 16, 100, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (messages->len, ==, 1);
  g_clear_pointer (&messages, g_ptr_array_unref);
  messages = frame (over, 101, 16, 100, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
}

static gchar *
event_reply (const gchar *status)
{
  return g_strdup_printf ("{\"parameters\":{\"event\":{\"sequence\":7,\"event\":\"reachabilityChanged\",\"current\":%s}},"
                          "\"continues\":true}", status);
}

/* Interface.stall as reachd sends it. */
#define STALL "{\"failRate\":0.96,\"method\":\"tcp\",\"periodMs\":10000,\"sentSinceReceive\":48," \
              "\"since\":\"2026-12-06T02:30:13.000Z\"}"

static void
test_events_map_to_what_apps_see (void)
{
  struct
  {
    const gchar *status;
    gboolean available, metered;
    GNetworkConnectivity connectivity;
    const gchar *path;
  } cases[] = {
    { "{\"reachable\":false,\"connectivity\":\"none\",\"expensive\":false,\"gateways\":[]}", FALSE, FALSE,
      G_NETWORK_CONNECTIVITY_LOCAL, "||" },
    { "{\"reachable\":true,\"connectivity\":\"limited\",\"expensive\":true,\"primary\":{\"name\":\"wwan0\"},\"gateways\":[]}",
      TRUE, TRUE, G_NETWORK_CONNECTIVITY_LIMITED, "wwan0||" },
    { "{\"reachable\":true,\"connectivity\":\"portal\",\"primary\":{\"name\":\"wlan0\"},\"vpn\":{\"name\":\"tun0\"},"
      "\"gateways\":[\"192.168.1.1\",\"fe80::1\"]}",
      TRUE, FALSE, G_NETWORK_CONNECTIVITY_PORTAL, "wlan0|tun0|192.168.1.1,fe80::1," },
    { "{\"reachable\":true,\"connectivity\":\"unknown\",\"vpn\":null}", TRUE, FALSE, G_NETWORK_CONNECTIVITY_FULL, "||" },
    { "{\"reachable\":true,\"connectivity\":\"full\"}", TRUE, FALSE, G_NETWORK_CONNECTIVITY_FULL, "||" },
    /* A data stall on the path: not full, whatever the last check said; a portal stays one. */
    { "{\"reachable\":true,\"connectivity\":\"full\",\"primary\":{\"name\":\"wlan0\",\"stall\":" STALL "}}",
      TRUE, FALSE, G_NETWORK_CONNECTIVITY_LIMITED, "wlan0||" },
    { "{\"reachable\":true,\"connectivity\":\"unknown\",\"primary\":{\"name\":\"wlan0\",\"stall\":" STALL "}}",
      TRUE, FALSE, G_NETWORK_CONNECTIVITY_LIMITED, "wlan0||" },
    { "{\"reachable\":true,\"connectivity\":\"full\",\"primary\":{\"name\":\"eth0\",\"stall\":null},"
      "\"vpn\":{\"name\":\"wg0\",\"stall\":" STALL "}}",
      TRUE, FALSE, G_NETWORK_CONNECTIVITY_LIMITED, "eth0|wg0|" },
    { "{\"reachable\":true,\"connectivity\":\"portal\",\"primary\":{\"name\":\"wlan0\",\"stall\":" STALL "}}",
      TRUE, FALSE, G_NETWORK_CONNECTIVITY_PORTAL, "wlan0||" },
    { "{\"reachable\":true,\"connectivity\":\"limited\",\"primary\":{\"name\":\"wlan0\",\"stall\":" STALL "}}",
      TRUE, FALSE, G_NETWORK_CONNECTIVITY_LIMITED, "wlan0||" },
    { "{\"reachable\":false,\"connectivity\":\"none\",\"primary\":{\"name\":\"wlan0\",\"stall\":" STALL "}}",
      FALSE, FALSE, G_NETWORK_CONNECTIVITY_LOCAL, "wlan0||" },
    /* No stall, or something that is no stall object, leaves full as it is. */
    { "{\"reachable\":true,\"connectivity\":\"full\",\"primary\":{\"name\":\"wlan0\",\"stall\":null},\"vpn\":null}",
      TRUE, FALSE, G_NETWORK_CONNECTIVITY_FULL, "wlan0||" },
    { "{\"reachable\":true,\"connectivity\":\"full\",\"primary\":{\"name\":\"wlan0\",\"stall\":\"tcp\"}}",
      TRUE, FALSE, G_NETWORK_CONNECTIVITY_FULL, "wlan0||" },
  };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree gchar *reply = event_reply (cases[i].status);
      g_autoptr(GError) error = NULL;
      ReachdState state = { 0 };
      gint64 sequence = 0;

      g_assert_true (reachd_parse_event (reply, strlen (reply), &sequence, &state, &error));
      g_assert_no_error (error);
      g_assert_cmpint (sequence, ==, 7);
      g_assert_cmpint (state.available, ==, cases[i].available);
      g_assert_cmpint (state.metered, ==, cases[i].metered);
      g_assert_cmpint (state.connectivity, ==, cases[i].connectivity);
      g_assert_cmpstr (state.path, ==, cases[i].path);
      reachd_state_clear (&state);
    }
}

static void
test_replies_that_are_no_event_are_refused (void)
{
  const gchar *replies[] = {
    "{\"error\":\"io.reachd.Reachability.SubscriberTooSlow\",\"parameters\":{\"dropped\":3}}",
    "{\"parameters\":{\"event\":{\"current\":{\"reachable\":true,\"connectivity\":\"full\"}}}}",
    "{\"parameters\":{\"event\":{\"sequence\":\"7\",\"current\":{\"reachable\":true,\"connectivity\":\"full\"}}}}",
    "{\"parameters\":{\"event\":{\"sequence\":7,\"current\":{\"connectivity\":\"full\"}}}}",
    "{\"parameters\":{\"event\":{\"sequence\":7,\"current\":{\"reachable\":true,\"connectivity\":1}}}}",
    "[1]", "{\"parameters\":", "",
  };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (replies); i++)
    {
      g_autoptr(GError) error = NULL;
      ReachdState state = { 0 };
      gint64 sequence = 0;

      g_assert_false (reachd_parse_event (replies[i], strlen (replies[i]), &sequence, &state, &error));
      g_assert_nonnull (error);
      g_assert_null (state.path);
    }
}

static void
test_check_replies (void)
{
  struct
  {
    const gchar *reply;
    ReachdCheckAnswer answer;
    guint delay;
    const gchar *failure;
  } cases[] = {
    { "{\"parameters\":{\"result\":{\"host\":\"h\",\"reachable\":true}}}", REACHD_CHECK_REACHABLE, 0, NULL },
    { "{\"parameters\":{\"result\":{\"host\":\"h\",\"reachable\":false}}}", REACHD_CHECK_UNREACHABLE, 0, NULL },
    { "{\"error\":\"io.reachd.Reachability.HostNotFound\",\"parameters\":{\"host\":\"h\"}}", REACHD_CHECK_HOST_NOT_FOUND, 0, NULL },
    { "{\"error\":\"io.reachd.Reachability.Busy\",\"parameters\":{\"retryAfterMs\":250}}", REACHD_CHECK_BUSY, 250, NULL },
    { "{\"error\":\"io.reachd.Reachability.Busy\",\"parameters\":{\"retryAfterMs\":999999}}", REACHD_CHECK_BUSY, 2000, NULL },
    { "{\"error\":\"io.reachd.Reachability.Busy\",\"parameters\":{\"retryAfterMs\":-5}}", REACHD_CHECK_BUSY, 1, NULL },
    { "{\"error\":\"io.reachd.Reachability.Busy\"}", REACHD_CHECK_BUSY, 100, NULL },
    { "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"host\"}}", REACHD_CHECK_FAILED, 0,
      "org.varlink.service.InvalidParameter" },
  };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree gchar *failure = NULL;
      ReachdCheckAnswer answer = REACHD_CHECK_FAILED;
      guint delay = 0;

      g_assert_true (reachd_parse_check (cases[i].reply, strlen (cases[i].reply), 2000, &answer, &delay, &failure, &error));
      g_assert_no_error (error);
      g_assert_cmpint (answer, ==, cases[i].answer);
      g_assert_cmpuint (delay, ==, cases[i].delay);
      g_assert_cmpstr (failure, ==, cases[i].failure);
    }
}

static void
test_check_replies_that_are_none (void)
{
  const gchar *replies[] = { "{\"parameters\":{}}", "{\"parameters\":{\"result\":true}}", "true", "{", "" };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (replies); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree gchar *failure = NULL;
      ReachdCheckAnswer answer;
      guint delay = 0;

      g_assert_false (reachd_parse_check (replies[i], strlen (replies[i]), 2000, &answer, &delay, &failure, &error));
      g_assert_nonnull (error);
    }
}

static JsonObject *
parse_call (GBytes *call, JsonParser *parser)
{
  gsize size = 0;
  const gchar *data = g_bytes_get_data (call, &size);

  /* One message: its NUL is the last byte and the only one. */
  g_assert_cmpuint (size, >, 1);
  g_assert_cmpint (data[size - 1], ==, '\0');
  g_assert_cmpuint (strlen (data), ==, size - 1);
  g_assert_true (json_parser_load_from_data (parser, data, -1, NULL));
  return json_node_get_object (json_parser_get_root (parser));
}

static void
test_calls (void)
{
  g_autoptr(GBytes) first = reachd_subscribe_call (FALSE, 0);
  g_autoptr(GBytes) again = reachd_subscribe_call (TRUE, 41);
  g_autoptr(GBytes) check = reachd_check_call ("ex\"ample.org", 443);
  g_autoptr(GBytes) no_port = reachd_check_call ("10.0.0.1", 0);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *call, *parameters;
  JsonArray *changes;

  call = parse_call (first, parser);
  g_assert_cmpstr (json_object_get_string_member (call, "method"), ==, REACHD_INTERFACE ".Subscribe");
  g_assert_true (json_object_get_boolean_member (call, "more"));
  parameters = json_object_get_object_member (call, "parameters");
  g_assert_false (json_object_has_member (parameters, "after"));
  changes = json_object_get_array_member (parameters, "changes");
  g_assert_cmpuint (json_array_get_length (changes), ==, 6);
  g_assert_cmpstr (json_array_get_string_element (changes, 0), ==, "connectivity");

  call = parse_call (again, parser);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (call, "parameters"), "after"), ==, 41);

  call = parse_call (check, parser);
  g_assert_cmpstr (json_object_get_string_member (call, "method"), ==, REACHD_INTERFACE ".Check");
  g_assert_false (json_object_has_member (call, "more"));
  parameters = json_object_get_object_member (call, "parameters");
  g_assert_cmpstr (json_object_get_string_member (parameters, "host"), ==, "ex\"ample.org");
  g_assert_cmpint (json_object_get_int_member (parameters, "port"), ==, 443);

  call = parse_call (no_port, parser);
  g_assert_false (json_object_has_member (json_object_get_object_member (call, "parameters"), "port"));
}

static void
test_state_compare (void)
{
  ReachdState a = { TRUE, FALSE, G_NETWORK_CONNECTIVITY_FULL, (gchar *) "eth0||" };
  ReachdState b = a;

  g_assert_cmpint (reachd_state_compare (&a, &b), ==, 0);
  b.path = (gchar *) "wlan0||";
  g_assert_cmpint (reachd_state_compare (&a, &b), ==, REACHD_CHANGED_PATH);
  b.available = FALSE;
  b.connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
  b.metered = TRUE;
  g_assert_cmpint (reachd_state_compare (&a, &b), ==,
                   REACHD_CHANGED_PATH | REACHD_CHANGED_AVAILABLE | REACHD_CHANGED_CONNECTIVITY | REACHD_CHANGED_METERED);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/framing/pieces", test_framing_splits_messages_however_they_arrive);
  g_test_add_func ("/framing/depth", test_framing_refuses_depth_over_the_limit);
  g_test_add_func ("/framing/strings", test_framing_counts_brackets_outside_strings_only);
  g_test_add_func ("/framing/json-glib-extensions", test_framing_refuses_what_json_glib_reads_otherwise);
  g_test_add_func ("/framing/size", test_framing_refuses_a_message_over_the_limit);
  g_test_add_func ("/events/mapping", test_events_map_to_what_apps_see);
  g_test_add_func ("/events/refused", test_replies_that_are_no_event_are_refused);
  g_test_add_func ("/check/answers", test_check_replies);
  g_test_add_func ("/check/refused", test_check_replies_that_are_none);
  g_test_add_func ("/calls", test_calls);
  g_test_add_func ("/state/compare", test_state_compare);
  return g_test_run ();
}
