import type { Message } from './inbox-types';

/** A message's body: its text, or its media inline (image, video, audio) or as a download. */
export function Body({ m }: { m: Message }) {
  if (m.deleted) return <span className="text muted">(deleted)</span>;
  const caption = m.caption ?? m.text;
  if (m.media) {
    const { url, mimetype, fileName } = m.media;
    let media;
    if (!url) media = <span className="muted">({m.type}: no longer kept)</span>;
    else if (mimetype.startsWith('image/')) media = <img className="media" src={url} alt={caption ?? fileName ?? 'an image'} loading="lazy" />;
    else if (mimetype.startsWith('video/')) media = <video className="media" src={url} controls preload="metadata" aria-label={caption ?? fileName ?? 'a video'} />;
    else if (mimetype.startsWith('audio/')) media = <audio src={url} controls preload="metadata" aria-label={caption ?? fileName ?? 'a voice message'} />;
    else
      media = (
        <a href={url} download={fileName ?? true}>
          Download {fileName ?? m.type} ({Math.max(1, Math.round(m.media.size / 1024))} KB)
        </a>
      );
    return (
      <>
        {media}
        {m.caption && <span className="text">{m.caption}</span>}
      </>
    );
  }
  return <span className="text">{m.text ?? `[${m.type}]`}</span>;
}
