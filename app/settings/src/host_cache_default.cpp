#include "quire/app/host_cache_default.h"

#include <QFile>
#include <algorithm>

#if defined(Q_OS_UNIX)
#include <unistd.h>
#endif

namespace quire::app {

qint64 system_free_memory() {
  QFile meminfo(QStringLiteral("/proc/meminfo"));
  if (meminfo.open(QIODevice::ReadOnly | QIODevice::Text)) {
    while (!meminfo.atEnd()) {
      const QByteArray line = meminfo.readLine();
      if (!line.startsWith("MemAvailable:")) continue;
      // "MemAvailable:   12345678 kB"
      const QList<QByteArray> words = line.simplified().split(' ');
      bool ok = false;
      const qint64 kibibytes = words.value(1).toLongLong(&ok);
      if (ok && kibibytes >= 0) return kibibytes * 1024;
    }
  }
#if defined(Q_OS_UNIX) && defined(_SC_AVPHYS_PAGES)
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) return qint64{pages} * page_size;
#endif
  return 0;
}

int host_cache_default_mib(qint64 free_bytes) {
  // An eighth leaves the user's other programs nearly all of what was free,
  // yet holds the pages of several evicted chats of a mid-sized model; the
  // cap keeps a large workstation from parking gigabytes it never needed.
  if (free_bytes <= 0) return 0;
  const qint64 share_mib = free_bytes / 8 / (qint64{1} << 20);
  return static_cast<int>(std::min<qint64>(share_mib, kHostCacheDefaultCapMib));
}

}  // namespace quire::app
