/* A small document tree built from libyaml events; JSON is read through the same parser (it is YAML's flow
 * subset once tabs between tokens are blanks). Every node keeps its line for error messages. */
#ifndef H5DLIO_TREE_H
#define H5DLIO_TREE_H
#include <stddef.h>

enum node_kind { NODE_SCALAR, NODE_MAP, NODE_SEQ };

typedef struct node {
    enum node_kind kind;
    int line;
    char *text;          /* scalar value */
    int quoted;          /* scalar was quoted: a string, never a bool/number by accident */
    size_t n;            /* map: pairs; seq: items */
    char **keys;         /* map keys */
    struct node **items; /* map values or seq items */
} node_t;

/* Parse text into a tree; -1 with "FILE:LINE:COL: message" in err on syntax error or duplicate key. */
int tree_parse(const char *text, size_t len, int is_json, const char *name, node_t **out, char *err, size_t errlen);
void tree_free(node_t *n);
node_t *tree_get(const node_t *map, const char *key);
#endif
