// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "record/child.h"
#include "lib/log.h"
#include "lib/owner.h"

struct child {
	pid_t pid;		/* CMD's process */
	int go_fd;		/* write end of the pipe CMD waits on; -1 once released */
	bool done;		/* it exited (and was reaped) */
	int status;		/* then its exit status, 128+N for signal N */
};

int child__start(char *const *cmd, child_setup_fn setup, void *ctx, struct child **out)
{
	struct child *c = calloc(1, sizeof(*c));
	struct owner_user u;
	int pfd[2], err, as_user;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	/* under sudo, CMD runs as the user who ran it (--as-root: as root) */
	as_user = owner__cmd_user(&u);
	if (as_user < 0) {
		pr_err("cannot read the account of the user who ran sudo (uid from SUDO_UID): %s; "
		       "--as-root runs %s as root", strerror(-as_user), cmd[0]);
		free(c);
		return as_user;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		err = -errno;
		free(c);
		return err;
	}
	c->pid = fork();
	if (c->pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		free(c);
		return err;
	}
	if (c->pid == 0) {
		char b;

		close(pfd[1]);
		/* wait until the probes are in place; EOF means the parent gave up */
		if (read(pfd[0], &b, 1) != 1)
			_exit(127);
		if (as_user && (err = owner__become(&u))) {
			pr_err("cannot run %s as %s: %s", cmd[0], u.name, strerror(-err));
			_exit(127);
		}
		if (setup && setup(ctx))
			_exit(127);
		execvp(cmd[0], cmd);
		pr_err("cannot run %s: %s", cmd[0], strerror(errno));
		_exit(127);
	}
	close(pfd[0]);
	c->go_fd = pfd[1];
	*out = c;
	return 0;
}

pid_t child__pid(const struct child *c)
{
	return c->pid;
}

int child__release(struct child *c)
{
	int err = 0;

	if (c->go_fd < 0)
		return 0;
	if (write(c->go_fd, "g", 1) != 1)
		err = -errno;
	close(c->go_fd);
	c->go_fd = -1;
	return err;
}

static void reaped(struct child *c, int st)
{
	c->done = true;
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

bool child__poll(struct child *c)
{
	int st;

	if (!c->done && waitpid(c->pid, &st, WNOHANG) == c->pid)
		reaped(c, st);
	return c->done;
}

int child__wait(struct child *c)
{
	int st;

	while (!c->done) {
		if (waitpid(c->pid, &st, 0) == c->pid)
			reaped(c, st);
		else if (errno != EINTR)
			break;
	}
	return c->status;
}

int child__status(const struct child *c)
{
	return c->status;
}

void child__free(struct child *c)
{
	if (!c)
		return;
	if (c->go_fd >= 0) {
		close(c->go_fd);	/* the child sees EOF and exits 127 without running CMD */
		waitpid(c->pid, NULL, 0);
	}
	free(c);
}
