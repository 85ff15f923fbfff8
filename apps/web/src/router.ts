import { useEffect, useState } from 'preact/hooks';

/** History-API navigation: the server answers every app path with index.html. */
export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event('sightline:navigate'));
}

export function useLocation(): URL {
  const [url, setUrl] = useState(() => new URL(location.href));
  useEffect(() => {
    const update = () => setUrl(new URL(location.href));
    window.addEventListener('popstate', update);
    window.addEventListener('sightline:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('sightline:navigate', update);
    };
  }, []);
  return url;
}

/** An in-app link: a real <a href> (keyboard, middle click) that navigates without reloading. */
export function linkHandler(to: string) {
  return (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
}
