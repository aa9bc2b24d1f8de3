#include "tree.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s);
    if (!p) {
        fprintf(stderr, "h5dlio: out of memory\n");
        abort();
    }
    return p;
}

static node_t *new_node(enum node_kind k, int line)
{
    node_t *n = xcalloc(1, sizeof *n);
    n->kind = k;
    n->line = line;
    return n;
}

static void push(node_t *parent, char *key, node_t *child)
{
    parent->keys = realloc(parent->keys, (parent->n + 1) * sizeof *parent->keys);
    parent->items = realloc(parent->items, (parent->n + 1) * sizeof *parent->items);
    if (!parent->keys || !parent->items) {
        fprintf(stderr, "h5dlio: out of memory\n");
        abort();
    }
    parent->keys[parent->n] = key;
    parent->items[parent->n] = child;
    parent->n++;
}

void tree_free(node_t *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        if (n->keys)
            free(n->keys[i]);
        tree_free(n->items[i]);
    }
    free(n->keys);
    free(n->items);
    free(n->text);
    free(n);
}

node_t *tree_get(const node_t *map, const char *key)
{
    if (!map || map->kind != NODE_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0)
            return map->items[i];
    return NULL;
}

/* Recursive descent over the event stream. Returns NULL on error (err filled). Nesting is bounded: a config is a
 * few levels deep, and unbounded recursion on hostile input would overflow the stack. */
#define TREE_MAX_DEPTH 64
static node_t *parse_node(yaml_parser_t *p, yaml_event_t *ev, const char *name, char *err, size_t errlen, int depth);

static int next_event(yaml_parser_t *p, yaml_event_t *ev, const char *name, char *err, size_t errlen)
{
    if (!yaml_parser_parse(p, ev)) {
        snprintf(err, errlen, "%s:%zu:%zu: syntax error: %s%s%s", name, p->problem_mark.line + 1,
                 p->problem_mark.column + 1, p->problem ? p->problem : "unknown", p->context ? " " : "",
                 p->context ? p->context : "");
        return -1;
    }
    return 0;
}

static node_t *parse_node(yaml_parser_t *p, yaml_event_t *ev, const char *name, char *err, size_t errlen, int depth)
{
    int line = (int)ev->start_mark.line + 1;
    if (ev->type == YAML_ALIAS_EVENT) {
        snprintf(err, errlen, "%s:%d: YAML aliases are not supported", name, line);
        yaml_event_delete(ev);
        return NULL;
    }
    if (ev->type == YAML_SCALAR_EVENT) {
        node_t *n = new_node(NODE_SCALAR, line);
        n->text = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        yaml_event_delete(ev);
        return n;
    }
    int is_map = ev->type == YAML_MAPPING_START_EVENT;
    if (!is_map && ev->type != YAML_SEQUENCE_START_EVENT) {
        snprintf(err, errlen, "%s:%d: unexpected document structure", name, line);
        yaml_event_delete(ev);
        return NULL;
    }
    yaml_event_delete(ev);
    if (depth >= TREE_MAX_DEPTH) {
        snprintf(err, errlen, "%s:%d: nested deeper than %d levels", name, line, TREE_MAX_DEPTH);
        return NULL;
    }
    node_t *n = new_node(is_map ? NODE_MAP : NODE_SEQ, line);
    for (;;) {
        yaml_event_t e;
        if (next_event(p, &e, name, err, errlen) < 0)
            goto fail;
        if (e.type == YAML_MAPPING_END_EVENT || e.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&e);
            return n;
        }
        char *key = NULL;
        if (is_map) {
            if (e.type != YAML_SCALAR_EVENT) {
                snprintf(err, errlen, "%s:%zu: mapping keys must be plain scalars", name, e.start_mark.line + 1);
                yaml_event_delete(&e);
                goto fail;
            }
            key = strndup((const char *)e.data.scalar.value, e.data.scalar.length);
            int kline = (int)e.start_mark.line + 1;
            yaml_event_delete(&e);
            if (tree_get(n, key)) {
                snprintf(err, errlen, "%s:%d: duplicate key '%s'", name, kline, key);
                free(key);
                goto fail;
            }
            if (next_event(p, &e, name, err, errlen) < 0) {
                free(key);
                goto fail;
            }
        }
        node_t *child = parse_node(p, &e, name, err, errlen, depth + 1);
        if (!child) {
            free(key);
            goto fail;
        }
        push(n, key, child);
    }
fail:
    tree_free(n);
    return NULL;
}

int tree_parse(const char *text, size_t len, int is_json, const char *name, node_t **out, char *err, size_t errlen)
{
    char *buf = malloc(len + 1);
    if (!buf)
        abort();
    memcpy(buf, text, len);
    buf[len] = 0;
    if (is_json) /* JSON strings cannot hold raw tabs: every tab is whitespace between tokens */
        for (size_t i = 0; i < len; i++)
            if (buf[i] == '\t')
                buf[i] = ' ';
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    node_t *root = NULL;
    int rc = -1;
    yaml_event_t e;
    /* stream start, document start (or stream end for an empty file) */
    if (next_event(&p, &e, name, err, errlen) < 0)
        goto done;
    yaml_event_delete(&e);
    if (next_event(&p, &e, name, err, errlen) < 0)
        goto done;
    if (e.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&e);
        snprintf(err, errlen, "%s: file is empty", name);
        goto done;
    }
    yaml_event_delete(&e);
    if (next_event(&p, &e, name, err, errlen) < 0)
        goto done;
    root = parse_node(&p, &e, name, err, errlen, 0);
    if (!root)
        goto done;
    if (next_event(&p, &e, name, err, errlen) < 0) /* document end */
        goto done;
    yaml_event_delete(&e);
    if (next_event(&p, &e, name, err, errlen) < 0)
        goto done;
    if (e.type != YAML_STREAM_END_EVENT) {
        snprintf(err, errlen, "%s:%zu: more than one document in the file", name, e.start_mark.line + 1);
        yaml_event_delete(&e);
        goto done;
    }
    yaml_event_delete(&e);
    rc = 0;
done:
    yaml_parser_delete(&p);
    free(buf);
    if (rc < 0) {
        tree_free(root);
        root = NULL;
    }
    *out = root;
    return rc;
}
