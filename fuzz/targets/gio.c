/* libFuzzer entry point (make fuzz, FUZZ_TARGETS=gio): the GIO module's handling of what reachd
 * sends (gio/reachdprotocol.c), built with clang, ASan and UBSan. The input is a stream as the
 * socket would deliver it:
 *
 *   byte 0     how it arrives: bits 0-3 the size of each read (1 << n bytes); bit 7 a small
 *              message limit (64 + 4 * bits 4-6 bytes) instead of reachd's 1 MiB, so that the
 *              size limit is reached by short inputs too
 *   bytes 1-   what reachd sent: varlink messages, each ended by a NUL, or anything else
 *
 * Each message the framer hands out is read as a Subscribe reply and as a Check reply, as the
 * module would. Traps (abort) when the framer holds more than its limit and one read, hands out
 * a message over the limit or with a NUL in it, or lets through a message that json-glib reads
 * as nested deeper than REACHD_MAX_DEPTH; when a reply is read into a state or answer that
 * cannot be. */

#include <stdint.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "reachdprotocol.h"

#define REQUIRE(condition)                                                          \
  do                                                                                \
    {                                                                               \
      if (!(condition))                                                             \
        g_error ("%s:%d: %s does not hold", __FILE__, __LINE__, #condition);        \
    }                                                                               \
  while (0)

/* Levels of the tree json-glib made: a scalar is 0, [] and {} are 1. Recursion is safe here:
 * the tree is as deep as the framer allowed, or the check below fails first at the top. */
static guint
tree_depth (JsonNode *node)
{
  guint deepest = 0;

  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      guint i;

      for (i = 0; i < json_array_get_length (array); i++)
        {
          guint depth = tree_depth (json_array_get_element (array, i));

          deepest = MAX (deepest, depth);
        }
      return deepest + 1;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObjectIter iter;
      JsonNode *member;

      json_object_iter_init (&iter, json_node_get_object (node));
      while (json_object_iter_next (&iter, NULL, &member))
        {
          guint depth = tree_depth (member);

          deepest = MAX (deepest, depth);
        }
      return deepest + 1;
    }
  return 0;
}

static void
handle (const gchar *message, gsize length)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  ReachdState state = { 0 }, copy = { 0 };
  ReachdCheckAnswer answer = REACHD_CHECK_FAILED;
  g_autofree gchar *failure = NULL;
  guint delay = 0;
  gint64 sequence = 0;

  if (json_parser_load_from_data (parser, message, (gssize) length, NULL))
    REQUIRE (tree_depth (json_parser_get_root (parser)) <= REACHD_MAX_DEPTH);

  if (reachd_parse_event (message, length, &sequence, &state, NULL))
    {
      REQUIRE (state.path != NULL);
      REQUIRE (state.connectivity == G_NETWORK_CONNECTIVITY_LOCAL || state.connectivity == G_NETWORK_CONNECTIVITY_LIMITED ||
               state.connectivity == G_NETWORK_CONNECTIVITY_PORTAL || state.connectivity == G_NETWORK_CONNECTIVITY_FULL);
      REQUIRE (state.available == (state.connectivity != G_NETWORK_CONNECTIVITY_LOCAL));
      reachd_state_copy (&copy, &state);
      REQUIRE (reachd_state_compare (&copy, &state) == 0);
      copy.metered = !copy.metered;
      REQUIRE (reachd_state_compare (&state, &copy) == REACHD_CHANGED_METERED);
    }
  else
    REQUIRE (state.path == NULL);
  reachd_state_clear (&state);
  reachd_state_clear (&copy);

  if (reachd_parse_check (message, length, 2000, &answer, &delay, &failure, NULL))
    {
      switch (answer)
        {
        case REACHD_CHECK_BUSY:
          REQUIRE (delay >= 1 && delay <= 2000);
          break;
        case REACHD_CHECK_FAILED:
          REQUIRE (failure != NULL);
          break;
        case REACHD_CHECK_REACHABLE:
        case REACHD_CHECK_UNREACHABLE:
        case REACHD_CHECK_HOST_NOT_FOUND:
          break;
        default:
          REQUIRE (!"an answer of no kind");
        }
    }
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ReachdFramer framer;
  gsize chunk, max_bytes, offset = 0;
  gboolean failed = FALSE;

  if (size < 1)
    return 0;
  chunk = (gsize) 1 << (data[0] & 0x0f);
  max_bytes = (data[0] & 0x80) ? 64 + 4 * ((data[0] >> 4) & 0x07) : REACHD_MAX_MESSAGE_BYTES;
  data++;
  size--;
  reachd_framer_init (&framer, max_bytes, REACHD_MAX_DEPTH);
  while (offset < size && !failed)
    {
      gsize n = MIN (chunk, size - offset);

      reachd_framer_push (&framer, data + offset, n);
      offset += n;
      REQUIRE (framer.buffer->len <= max_bytes + n);
      for (;;)
        {
          g_autoptr(GError) error = NULL;
          const gchar *message = NULL;
          gsize length = 0;

          if (!reachd_framer_next (&framer, &message, &length, &error))
            {
              failed = error != NULL;
              break;
            }
          REQUIRE (length <= max_bytes);
          REQUIRE (memchr (message, '\0', length) == NULL && message[length] == '\0');
          handle (message, length);
        }
    }
  reachd_framer_clear (&framer);
  return 0;
}
