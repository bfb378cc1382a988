/* SPDX-License-Identifier: MIT */
/*
 * The formats of `gtrace-bpf export`, one row each: the one list the enum,
 * -f's names (cmd_export.c's choices and their error line), the default
 * output's extension and the writer come from. A new format is a row here
 * and its writer (int WRITER(struct trace_reader *r, FILE *out, const char
 * **why): every record of r to out, 0 or a negative errno with *why a
 * one-line reason), then README's, the man page's, the completion's and
 * user/export/README.md's lists, which tests/integration/test_docs.sh holds
 * against this table.
 *
 * EXPORT_FORMAT(NAME, -f name, extension, writer, what it is)
 */
EXPORT_FORMAT(PERFETTO, "perfetto", ".pftrace", export_perfetto__write, "native Perfetto protobuf")
EXPORT_FORMAT(JSON, "json", ".json", export_json__write, "Chrome trace event JSON")
EXPORT_FORMAT(CSV, "csv", ".csv", export_csv__write, "one row per event")
