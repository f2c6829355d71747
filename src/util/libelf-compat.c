// SPDX-License-Identifier: MIT
/*
 * elfutils 0.192's libelf.a (Debian 13's) calls four functions of its
 * internal libeu that the archive does not hold (sourceware bug 32293,
 * fixed in 0.193): a static link against it fails on them.  make STATIC=1
 * compiles these in (IFT_LIBELF_EU_SEARCH) only where libelf.a needs and
 * lacks them.  Each tree is a struct whose first member is its tsearch(3)
 * root, followed by a lock whose layout depends on how elfutils was
 * configured: these touch the root alone, and one lock of their own
 * serializes every call, as the lock in the struct would.
 */
#ifdef IFT_LIBELF_EU_SEARCH
#include <pthread.h>
#include <search.h>
#include <stdlib.h>

struct eu_tree {
	void *root;	/* then libelf's lock, never touched here */
};

typedef int (*eu_compare)(const void *, const void *);

void eu_search_tree_init(struct eu_tree *tree);
void eu_search_tree_fini(struct eu_tree *tree, void (*free_node)(void *));
void *eu_tsearch(const void *key, struct eu_tree *tree, eu_compare compare);
void *eu_tdelete(const void *key, struct eu_tree *tree, eu_compare compare);

static pthread_mutex_t eu_lock = PTHREAD_MUTEX_INITIALIZER;

void eu_search_tree_init(struct eu_tree *tree)
{
	tree->root = NULL;
}

void eu_search_tree_fini(struct eu_tree *tree, void (*free_node)(void *))
{
	pthread_mutex_lock(&eu_lock);
	tdestroy(tree->root, free_node);
	tree->root = NULL;
	pthread_mutex_unlock(&eu_lock);
}

void *eu_tsearch(const void *key, struct eu_tree *tree, eu_compare compare)
{
	void *node;

	pthread_mutex_lock(&eu_lock);
	node = tsearch(key, &tree->root, compare);
	pthread_mutex_unlock(&eu_lock);
	return node;
}

void *eu_tdelete(const void *key, struct eu_tree *tree, eu_compare compare)
{
	void *node;

	pthread_mutex_lock(&eu_lock);
	node = tdelete(key, &tree->root, compare);
	pthread_mutex_unlock(&eu_lock);
	return node;
}
#endif
