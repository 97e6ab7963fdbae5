/*
 * Which trees a watcher polls instead of following inotify: those on file
 * systems that send no events of changes made on other hosts (network and
 * parallel file systems, FUSE), by the type statfs reports, unless
 * scipis.watch_method says otherwise.
 */
#include "jobs.h"

#include <sys/vfs.h>

int			scipis_watch_method = SCIPIS_WATCH_AUTO;
int			scipis_watch_poll_ms = 10000;

typedef struct FsKind
{
	uint32		magic;			/* statfs's f_type */
	const char *name;
} FsKind;

static const FsKind polled_fs[] = {
	{0x6969, "NFS"},
	{0x517B, "SMB"},
	{0xFF534D42, "CIFS"},
	{0xFE534D42, "SMB2"},
	{0x0BD00BD0, "Lustre"},
	{0x47504653, "GPFS"},
	{0x00C36400, "CephFS"},
	{0x19830326, "BeeGFS"},
	{0xAAD7AAEA, "PanFS"},
	{0x20030528, "OrangeFS"},
	{0x7461636F, "OCFS2"},
	{0x01161970, "GFS2"},
	{0x5346414F, "AFS"},
	{0x6B414653, "AFS"},
	{0x73757245, "Coda"},
	{0x01021997, "9P"},
	{0x65735546, "FUSE"},
};

const char *
scipis_watch_poll_reason(const char *root)
{
	struct statfs st;

	if (scipis_watch_method == SCIPIS_WATCH_POLL)
		return "scipis.watch_method is poll";
	if (scipis_watch_method == SCIPIS_WATCH_INOTIFY || statfs(root, &st) != 0)
		return NULL;
	for (size_t i = 0; i < lengthof(polled_fs); i++)
		if ((uint32) st.f_type == polled_fs[i].magic)
			return psprintf("%s is on %s, which sends no events of changes made on other hosts",
							root, polled_fs[i].name);
	return NULL;
}
